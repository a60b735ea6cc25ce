package agent

import (
	"math"
	"slices"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
)

// The algorithm packages import nothing of each other; these conversions
// are the seams between them.

func toGossipStatic(s probe.Static, sw string, features []string) nodestate.Static {
	out := nodestate.Static{Hostname: s.Hostname, CPUModel: s.CPUModel, Cores: s.Cores, Threads: s.Threads,
		MHz: s.MHz, MemTotal: s.MemTotal, Switch: sw}
	if len(features) > 0 {
		out.Features = slices.Compact(slices.Sorted(slices.Values(features)))
	}
	for _, pe := range s.PEs {
		out.PEs = append(out.PEs, nodestate.PE{Kind: pe.Kind, Model: pe.Model, Count: pe.Count, MemBytes: pe.MemBytes})
	}
	return out
}

func toGossipMeans(m probe.Means) nodestate.Means {
	return nodestate.Means{Now: m.Now, M1: m.M1, M5: m.M5, M15: m.M15}
}

func toGossipDynamic(d probe.Dynamic) nodestate.Dynamic {
	return nodestate.Dynamic{Load: toGossipMeans(d.Load), CPUUtil: toGossipMeans(d.CPUUtil),
		MemAvail: toGossipMeans(d.MemAvail), NetFlow: toGossipMeans(d.NetFlow), Users: d.Users, SampledAt: d.At.UnixMilli(),
		NetRx: math.Round(d.NetRx), NetTx: math.Round(d.NetTx)}
}
