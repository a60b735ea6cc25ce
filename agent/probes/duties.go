package probes

import (
	"context"
	"time"

	"github.com/shoal-hpc/shoal/agent/probes/child"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// RunDuties carries out this node's bandwidth duties: when a round of the
// cycle recorded in raft begins and this node sends in one of its pairs,
// it hands the test to the bandwidth probe. Rounds are time slots
// (ProbeDuties.SetAt + r*RoundLen), so every node reads the same schedule
// from its local copy of raft without talking to the others.
func (m *Manager) RunDuties(ctx context.Context) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.doDuty(m.now())
		}
	}
}

func (m *Manager) doDuty(now time.Time) {
	var d raftfsm.ProbeDuties
	var peer string
	var key dutyKey
	m.d.State.View(func(s *raftfsm.State) {
		d = s.ProbeDuties
		r := probeplan.RoundAt(d.SetAt, d.RoundLen, len(d.Rounds), now)
		if d.Cycle == 0 || r < 0 || r >= len(d.Rounds) {
			return
		}
		key = dutyKey{cycle: d.Cycle, setAt: d.SetAt, round: r}
		for _, p := range d.Rounds[r] {
			if p.From == m.d.Node {
				peer = p.To
			}
		}
	})
	if peer == "" {
		return
	}
	m.mu.Lock()
	done := m.dutyDone[key]
	m.dutyDone[key] = true
	if len(m.dutyDone) > 1024 {
		m.dutyDone = map[dutyKey]bool{key: true}
	}
	m.mu.Unlock()
	if done {
		return
	}
	addr := ""
	for _, p := range m.livePeers() {
		if p.Name == peer {
			addr = p.Addr
		}
	}
	bw := m.proc(raftfsm.ProbeBandwidth)
	switch {
	case addr == "":
		m.log.Info("bandwidth duty skipped: peer is not alive", "peer", peer, "cycle", key.cycle, "round", key.round)
		return
	case bw == nil || bw.exited():
		m.log.Warn("bandwidth duty skipped: the bandwidth probe is down", "peer", peer, "cycle", key.cycle, "round", key.round)
		return
	}
	m.mu.Lock()
	m.testID++
	id := m.testID
	m.pendingBW[id] = peer
	bytes := m.cfg.BandwidthBytes
	m.mu.Unlock()
	if !bw.send(child.Msg{Type: child.TypeTest, ID: id, Peer: peer, Addr: addr, Bytes: bytes}) {
		m.mu.Lock()
		delete(m.pendingBW, id)
		m.mu.Unlock()
	}
}
