package probes

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/agent/probes/child"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// keptChecks bounds the checks a node keeps to judge its link: more than
// any sensible Confirm, a few minutes at the default interval.
const keptChecks = 16

// quietShare: a peer whose gossiped traffic either way is above this
// share of the pair's latest test is not checked against. What a peer
// carries for a job shares its end of the path, which this node cannot
// count, and would read as this node's link gone slow.
const quietShare = 0.25

// checkTimeout bounds each half of a check: 256 KiB in 2 s is 1 Mbit/s,
// the slowest link a check still measures to the end.
const checkTimeout = 2 * time.Second

// linkChecks is the node's link check state, under Manager.mu.
type linkChecks struct {
	pending map[uint64]string // test id → peer
	last    string            // the peer of the last check, for the rotation
	checks  []probeplan.LinkCheck
	verdict probeplan.LinkVerdict
}

// RunLinkChecks checks this node's link about every LinkChecks().Interval
// until ctx ends (checkLink), each wait drawn anew
// (probeplan.LinkCheckConfig.NextCheckIn) from a source seeded by the
// node's name and its start, so that no two nodes check in step; it
// returns at once when the check is off.
func (m *Manager) RunLinkChecks(ctx context.Context) {
	lc := m.cfg.LinkChecks()
	if want := m.cfg.LinkCheck.Interval; lc.Interval != want {
		m.log.Warn("link checks run less often than configured: the probe budget leaves them no more (raise --probe-budget)",
			"interval", lc.Interval, "configured", want, "probe_budget", m.cfg.Budget)
	}
	if lc.Interval <= 0 {
		return
	}
	r := checkRand(m.d.Node, m.now())
	t := time.NewTimer(lc.NextCheckIn(r))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.checkLink(m.now())
			t.Reset(lc.NextCheckIn(r))
		}
	}
}

// checkRand is the source of a node's check times: seeded by its name, so
// nodes started in the same instant differ, and by its start, so a node
// restarted does not repeat its times.
func checkRand(node string, start time.Time) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(node))
	return rand.New(rand.NewPCG(h.Sum64(), uint64(start.UnixNano())))
}

// checkCandidate is a peer a check may go to.
type checkCandidate struct {
	Peer child.Peer
	// Figure is the pair's latest test, the slower way (0: never tested);
	// Traffic the peer's gossiped traffic, the busier way, Mbit/s.
	Figure, Traffic float64
}

// chooseCheckPeer picks the peer of this node's next check: the first, in
// name order after last (a rotation, so that Confirm checks in a row go
// to different peers), that the pair's latest test gives a figure to
// judge the check by, that is quiet (quietShare) and not in a bandwidth
// test of the round under way or the next (busy). ok is false when none
// is.
func chooseCheckPeer(cands []checkCandidate, last string, busy map[string]bool) (child.Peer, bool) {
	slices.SortFunc(cands, func(a, b checkCandidate) int {
		switch {
		case a.Peer.Name < b.Peer.Name:
			return -1
		case a.Peer.Name > b.Peer.Name:
			return 1
		}
		return 0
	})
	start := 0
	for i, c := range cands {
		if c.Peer.Name > last {
			start = i
			break
		}
	}
	for k := range cands {
		c := cands[(start+k)%len(cands)]
		if c.Figure > 0 && c.Traffic <= quietShare*c.Figure && !busy[c.Peer.Name] {
			return c.Peer, true
		}
	}
	return child.Peer{}, false
}

// dutyBusy lists the nodes in a bandwidth test of the round running at
// now or the next one: a check beside a test would slow both, and the
// probe runs one test at a time, so a duty would find it busy.
func (m *Manager) dutyBusy(now time.Time) map[string]bool {
	busy := map[string]bool{}
	m.d.State.View(func(s *raftfsm.State) {
		d := s.ProbeDuties
		r := probeplan.RoundAt(d.SetAt, d.RoundLen, len(d.Rounds), now)
		for i := max(r, 0); d.Cycle > 0 && i < min(r+2, len(d.Rounds)); i++ {
			for _, p := range d.Rounds[i] {
				busy[p.From], busy[p.To] = true, true
			}
		}
	})
	return busy
}

// checkLink sends one check to the next quiet peer, unless this node
// or every peer is in a bandwidth test now.
func (m *Manager) checkLink(now time.Time) {
	busy := m.dutyBusy(now)
	if busy[m.d.Node] {
		return
	}
	traffic := map[string]float64{}
	for _, e := range m.d.Gossip.Nodes() {
		traffic[e.State.Name] = max(e.State.Dyn.NetRxBytesPerSec, e.State.Dyn.NetTxBytesPerSec) * 8 / 1e6
	}
	var cands []checkCandidate
	for _, p := range m.livePeers() {
		out, in := m.row.latest(p.Name)
		fig := min(out, in)
		if out == 0 || in == 0 {
			fig = max(out, in)
		}
		cands = append(cands, checkCandidate{Peer: p, Figure: fig, Traffic: traffic[p.Name]})
	}
	m.mu.Lock()
	last := m.lc.last
	m.mu.Unlock()
	peer, ok := chooseCheckPeer(cands, last, busy)
	bw := m.proc(raftfsm.ProbeBandwidth)
	if !ok || bw == nil || bw.exited() {
		return
	}
	m.mu.Lock()
	m.testID++
	id := m.testID
	m.lc.pending[id] = peer.Name
	m.lc.last = peer.Name
	m.mu.Unlock()
	msg := child.Msg{Type: child.TypeTest, ID: id, Peer: peer.Name, Addr: peer.Addr, Bytes: m.cfg.LinkCheck.Bytes,
		Check: true, TimeoutMS: checkTimeout.Milliseconds()}
	if !bw.send(msg) {
		m.mu.Lock()
		delete(m.lc.pending, id)
		m.mu.Unlock()
	}
}

// checked takes a check's result: it is judged, with the checks before
// it, against the pair's latest test, and the node's link state is
// gossiped when the verdict changes. It is not a bandwidth test: the
// row keeps the pair's latest full test.
func (m *Manager) checked(msg child.Msg, now time.Time) {
	m.mu.Lock()
	peer, ok := m.lc.pending[msg.ID]
	delete(m.lc.pending, msg.ID)
	m.mu.Unlock()
	if !ok || peer != msg.Peer {
		return
	}
	m.smp.testBytes(msg.RevBytes, msg.Bytes)
	if msg.Err != "" {
		m.log.Debug("link check failed", "peer", msg.Peer, "err", msg.Err)
		return
	}
	out, in, at := m.row.latestTest(peer)
	c := probeplan.LinkCheck{Peer: peer, At: now, RowOutMbps: out, RowInMbps: in, RowAt: at,
		OutMbps: carriedRate(msg.Bytes, msg.NS, msg.Carried), InMbps: carriedRate(msg.RevBytes, msg.RevNS, msg.RevCarried)}
	m.mu.Lock()
	m.lc.checks = append(m.lc.checks, c)
	if len(m.lc.checks) > keptChecks {
		m.lc.checks = slices.Delete(m.lc.checks, 0, len(m.lc.checks)-keptChecks)
	}
	v := probeplan.JudgeLink(m.lc.checks, m.cfg.LinkCheck)
	same := v.Change == m.lc.verdict.Change && v.Since.Equal(m.lc.verdict.Since)
	m.lc.verdict = v
	m.mu.Unlock()
	if same {
		return
	}
	var st *nodestate.LinkState
	if v.Change != "" {
		st = &nodestate.LinkState{Change: string(v.Change), Mbps: roundTenth(v.Mbps), Since: v.Since.UnixMilli(), At: v.At.UnixMilli()}
		m.log.Info("link check: this node's link differs from its pairs' latest tests", "change", v.Change, "mbps", st.Mbps,
			"since", v.Since, "peer", peer)
	} else {
		m.log.Info("link check: this node's link agrees with its pairs' latest tests again", "peer", peer)
	}
	m.d.Gossip.Update(func(s *nodestate.NodeState) { s.Link = st })
}

// carriedRate is a check half's rate, or what this node's link carried
// that way meanwhile when that was more: a job's traffic beside the
// check took its share of a link that is not slower for it.
func carriedRate(bytes uint64, ns int64, carried float64) float64 {
	if bytes == 0 || ns <= 0 {
		return 0
	}
	r := float64(bytes) * 8 / (float64(ns) / 1e9) / 1e6
	if validRate(carried) && carried > r {
		return carried
	}
	return r
}

func roundTenth(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
