package agent

import (
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/probe"
)

// The algorithm packages import nothing of each other; these conversions
// are the seams between them.

func toGossipStatic(s probe.Static, sw string) gossip.Static {
	out := gossip.Static{Hostname: s.Hostname, CPUModel: s.CPUModel, Cores: s.Cores, Threads: s.Threads,
		MHz: s.MHz, MemTotal: s.MemTotal, Switch: sw}
	for _, pe := range s.PEs {
		out.PEs = append(out.PEs, gossip.PE{Kind: pe.Kind, Model: pe.Model, Count: pe.Count, MemBytes: pe.MemBytes})
	}
	return out
}

func toGossipMeans(m probe.Means) gossip.Means {
	return gossip.Means{Now: m.Now, M1: m.M1, M5: m.M5, M15: m.M15}
}

func toGossipDynamic(d probe.Dynamic) gossip.Dynamic {
	return gossip.Dynamic{Load: toGossipMeans(d.Load), CPUUtil: toGossipMeans(d.CPUUtil),
		MemAvail: toGossipMeans(d.MemAvail), NetFlow: toGossipMeans(d.NetFlow), Users: d.Users, SampledAt: d.At.UnixMilli()}
}

func toAPIMeans(m gossip.Means) api.Means {
	return api.Means{Now: m.Now, M1: m.M1, M5: m.M5, M15: m.M15}
}

func toAPINode(e gossip.Entry) api.Node {
	s := e.State
	n := api.Node{
		Name: s.Name, Addr: s.Addr, Status: string(e.Status), Hostname: s.Static.Hostname, CPUModel: s.Static.CPUModel,
		Cores: s.Static.Cores, Threads: s.Static.Threads, MHz: s.Static.MHz, MemTotal: s.Static.MemTotal,
		Load: toAPIMeans(s.Dyn.Load), CPUUtil: toAPIMeans(s.Dyn.CPUUtil), MemAvail: toAPIMeans(s.Dyn.MemAvail),
		NetFlow: toAPIMeans(s.Dyn.NetFlow), Users: s.Dyn.Users, PEs: []api.PE{}, Switch: s.Static.Switch,
		HTTPPort: s.HTTPPort, RaftPort: s.RaftPort,
	}
	if s.Dyn.SampledAt > 0 {
		n.Sampled = time.UnixMilli(s.Dyn.SampledAt).UTC()
	}
	for _, pe := range s.Static.PEs {
		n.PEs = append(n.PEs, api.PE{Kind: pe.Kind, Model: pe.Model, Count: pe.Count, MemBytes: pe.MemBytes})
	}
	return n
}
