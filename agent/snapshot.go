package agent

import (
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// placementSnapshot turns what gossip observes and what raft holds into
// placement's input: nodes with their Table-1 attributes and the slots
// shoal jobs hold on them, and the links each node measured.
func (a *Agent) placementSnapshot(st *raftfsm.State) placement.Snapshot {
	held := raftfsm.HeldSlots(st)
	var snap placement.Snapshot
	for _, e := range a.gossip.Nodes() {
		if !e.HasState {
			continue
		}
		s := e.State
		n := placement.Node{
			Name: s.Name, Alive: e.Status == gossip.StatusAlive, Switch: s.Static.Switch,
			Cores: s.Static.Cores, Threads: s.Static.Threads, MHz: s.Static.MHz, MemTotal: s.Static.MemTotal,
			Load: pm(s.Dyn.Load), CPUUtil: pm(s.Dyn.CPUUtil), MemAvail: pm(s.Dyn.MemAvail), NetFlow: pm(s.Dyn.NetFlow),
			Users: s.Dyn.Users, HeldSlots: held[s.Name],
		}
		for _, pe := range s.Static.PEs {
			n.PEs = append(n.PEs, placement.PE{Kind: pe.Kind, Model: pe.Model, Count: pe.Count})
		}
		snap.Nodes = append(snap.Nodes, n)
		for _, ne := range s.Net {
			if ne.BWAt == 0 && ne.RTTAt == 0 {
				continue
			}
			snap.Links = append(snap.Links, placement.Link{From: s.Name, To: ne.Peer, RTTms: ne.RTT1 / 1000,
				AvailMbps: ne.BW, PeakMbps: ne.Peak, Measured: ne.BWAt != 0})
		}
	}
	return snap
}

func pm(m gossip.Means) placement.Means {
	return placement.Means{Now: m.Now, M1: m.M1, M5: m.M5, M15: m.M15}
}

// placementRequest turns a job's spec into placement's question.
func placementRequest(j *raftfsm.Job, settings raftfsm.Settings) placement.Request {
	sp := j.Spec
	r := placement.Request{
		N: sp.NP, PPN: sp.PPN, Policy: sp.Policy, Relax: sp.Relax, Oversubscribe: sp.Oversubscribe,
		Alpha: settings.Alpha, WLT: settings.WLT, WBW: settings.WBW, Seed: int64(j.ID)*7919 + int64(j.Attempt),
		Force: sp.Force,
	}
	if sp.Alpha != nil {
		r.Alpha = *sp.Alpha
	}
	for _, h := range sp.Hostfile {
		r.Hostfile = append(r.Hostfile, placement.HostSlots{Host: h.Host, Slots: h.Slots})
	}
	for _, pe := range sp.PEs {
		r.PEs = append(r.PEs, placement.PENeed{Kind: pe.Kind, PerProc: pe.PerProc})
	}
	return r
}
