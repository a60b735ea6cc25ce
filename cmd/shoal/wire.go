package main

import (
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/placement"
)

// The CLI sends and prints the API's own types (agent/api); the placement
// package only parses hostfiles and --weight and formats hostfiles here.
// These convert between the two, so a rename in placement changes no JSON.

func apiHostfile(hs []placement.HostSlots) []api.HostSlots {
	var out []api.HostSlots
	for _, h := range hs {
		out = append(out, api.HostSlots{Host: h.Host, Slots: h.Slots})
	}
	return out
}

func apiAttrWeights(w placement.AttrWeights) *api.AttrWeights {
	return &api.AttrWeights{Load: w.Load, CPUUtil: w.CPUUtil, NetFlow: w.NetFlow, MemAvail: w.MemAvail, Cores: w.Cores,
		MHz: w.MHz, MemTotal: w.MemTotal, Users: w.Users, Now: w.Now, M1: w.M1, M5: w.M5, M15: w.M15}
}

// placementHosts is the part of an alloc answer placement.FormatHostfile reads.
func placementHosts(d api.AllocDecision) placement.Decision {
	out := placement.Decision{Wait: d.Wait, WaitReason: d.WaitReason}
	for _, h := range d.Hosts {
		out.Hosts = append(out.Hosts, placement.Host{Node: h.Node, NP: h.Procs})
	}
	return out
}
