package httpapi

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/vivaldi"
)

// handleNet serves GET /v1/net: one object per measured ordered pair,
// read from the servers' table of network rows (agent/rows). A server
// answers from its own table; any other agent asks a server (once:
// ?forwarded=1 is answered locally, so a request never loops).
func (s *Server) handleNet(w http.ResponseWriter, r *http.Request) {
	rows, ok := s.be.NetRows()
	if ok || r.URL.Query().Get("forwarded") != "" {
		writeJSON(w, http.StatusOK, netPairs(s.be.Nodes(), rows, s.now()))
		return
	}
	var last error = errors.New("no server known in gossip")
	for _, name := range s.be.NetServers() {
		base, err := s.be.PeerBase(name)
		if err != nil {
			last = err
			continue
		}
		var out []api.NetPair
		if err := s.be.PeerClient(base).Do(r.Context(), http.MethodGet, "/v1/net?forwarded=1", nil, &out); err != nil {
			last = fmt.Errorf("%s: %w", name, err)
			continue
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	writeErr(w, http.StatusServiceUnavailable, "ask a server for the network matrix: "+last.Error())
}

// netPairs lists the measured pairs of rows among gossip's nodes, and
// the coordinate estimate of every pair of nodes with a coordinate.
func netPairs(nodes []nodestate.Entry, rows []nodestate.NetRow, now time.Time) []api.NetPair {
	cells := make(map[string][]nodestate.NetEntry, len(rows))
	for _, r := range rows {
		cells[r.Node] = r.Cells
	}
	out := []api.NetPair{}
	coords := map[string]*nodestate.Coord{}
	coordAt := map[string]int64{} // the owner's latest sample: its coordinate is at least that fresh
	for _, e := range nodes {
		if e.HasState && e.State.Coord != nil && (e.Status == nodestate.StatusAlive || e.Status == nodestate.StatusSuspect) {
			coords[e.State.Name] = e.State.Coord
			coordAt[e.State.Name] = e.State.Dyn.SampledAt
		}
	}
	estimate := func(p *api.NetPair) {
		if d, ok := vivaldi.EstimateRTT(coords[p.From], coords[p.To]); ok {
			p.RTTEstms = ptr(math.Round(float64(d)/float64(time.Microsecond)) / 1000)
			if a, b := coordAt[p.From], coordAt[p.To]; a > 0 && b > 0 {
				p.RTTEstAgeS = ageS(now, min(a, b))
			}
		}
	}
	for _, e := range nodes {
		if !e.HasState {
			continue
		}
		listed := map[string]bool{e.State.Name: true}
		for _, c := range cells[e.State.Name] {
			listed[c.Peer] = true
			p := api.NetPair{From: e.State.Name, To: c.Peer}
			estimate(&p)
			if c.RTTAt > 0 {
				p.RTTms, p.RTT5ms = ptr(c.RTT1us/1000), ptr(c.RTT5us/1000)
				p.RTTAt = time.UnixMilli(c.RTTAt).UTC()
				p.RTTAgeS = ageS(now, c.RTTAt)
			}
			if c.BWAt > 0 {
				p.BWMbps, p.PeakMbps = ptr(c.AvailMbps), ptr(c.PeakMbps)
				p.MeasuredAt = time.UnixMilli(c.BWAt).UTC()
			}
			netPairDirections(&p, c, now)
			out = append(out, p)
		}
		if coords[e.State.Name] == nil {
			continue
		}
		for peer := range coords {
			if !listed[peer] {
				p := api.NetPair{From: e.State.Name, To: peer}
				estimate(&p)
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

func ptr(f float64) *float64 { return &f }

// netPairDirections fills each bandwidth direction the row's cell holds
// and its age.
func netPairDirections(p *api.NetPair, c nodestate.NetEntry, now time.Time) {
	if c.OutAt > 0 {
		p.BWOutMbps, p.PeakOutMbps, p.BWOutAgeS = ptr(c.OutMbps), ptr(c.PeakOutMbps), ageS(now, c.OutAt)
		if c.CarriedOutMbps > 0 {
			p.CarriedOutMbps = ptr(c.CarriedOutMbps)
		}
	}
	if c.InAt > 0 {
		p.BWInMbps, p.PeakInMbps, p.BWInAgeS = ptr(c.InMbps), ptr(c.PeakInMbps), ageS(now, c.InAt)
		if c.CarriedInMbps > 0 {
			p.CarriedInMbps = ptr(c.CarriedInMbps)
		}
	}
}

// ageS is the age in seconds, to 0.1 s, of a Unix-millisecond timestamp
// from another node's clock; 0 rather than negative under clock skew.
func ageS(now time.Time, atMS int64) *float64 {
	return ptr(math.Round(max(0, float64(now.UnixMilli()-atMS))/100) / 10)
}

// handleProbes serves GET /v1/probes: every probe of every node with state
// as gossiped (stale when its beat is older than the stale threshold) and
// the leader's last relaunch reason from raft.
func (s *Server) handleProbes(w http.ResponseWriter, r *http.Request) {
	if !s.blockNodes(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, s.probeInfos())
}

// probeInfos is every probe of every node as GET /v1/probes answers it.
func (s *Server) probeInfos() []api.ProbeInfo {
	stale := s.cfg.ProbeStaleAfter
	reasons := map[raftfsm.ProbeKey]string{}
	s.be.View(func(st *raftfsm.State) {
		for k, p := range st.Probes {
			reasons[k] = p.LastReason
		}
	})
	now := s.now()
	out := []api.ProbeInfo{}
	for _, e := range s.be.Nodes() {
		if !e.HasState || e.Status == nodestate.StatusLeft {
			continue
		}
		for _, b := range e.State.Probes {
			pi := api.ProbeInfo{Node: e.State.Name, Kind: b.Kind, State: b.State, PID: b.PID, Restarts: b.Restarts,
				LastReason: reasons[raftfsm.ProbeKey{Node: e.State.Name, Kind: b.Kind}]}
			if b.Beat > 0 {
				pi.LastBeat = time.UnixMilli(b.Beat).UTC()
				if b.State == probeplan.StateRunning && now.Sub(pi.LastBeat) > stale {
					pi.State = "stale"
				}
			}
			if e.Status == nodestate.StatusDead {
				pi.State = "node-dead"
			}
			out = append(out, pi)
		}
	}
	return out
}
