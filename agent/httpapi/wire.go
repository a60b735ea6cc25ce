package httpapi

import (
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// The HTTP API has wire types of its own (agent/api); these convert them at
// the boundary to the raft command schema (raftfsm) and the placement
// package's types, so renaming a field of a pure package can change neither
// a user's JSON nor, through the API, the raft log.

func toRaftSpec(s api.JobSpec) raftfsm.JobSpec {
	out := raftfsm.JobSpec{Cmd: s.Cmd, Env: s.Env, Workdir: s.Workdir, NP: s.NP, PPN: s.PPN, Priority: s.Priority,
		Policy: s.Policy, Relax: s.Relax, Oversubscribe: s.Oversubscribe, PEsDetected: s.PEsDetected, MPI: s.MPI,
		Immediate: s.Immediate, Force: s.Force, MaxAttempts: s.MaxAttempts, Timeout: s.Timeout, Alpha: s.Alpha,
		Name: s.Name, Begin: s.Begin, Batch: s.Batch, Output: s.Output, Error: s.Error, Stdin: s.Stdin, MemPerNode: s.MemPerNode, MemPerRank: s.MemPerRank, CPUsPerRank: s.CPUsPerRank, Partition: s.Partition, Constraint: s.Constraint}
	for _, h := range s.Hostfile {
		out.Hostfile = append(out.Hostfile, raftfsm.HostSlots{Host: h.Host, Slots: h.Slots})
	}
	for _, d := range s.Depend {
		out.Depend = append(out.Depend, raftfsm.Dependency{Type: d.Type, IDs: d.IDs})
	}
	if a := s.Array; a != nil {
		out.Array = &raftfsm.ArraySpec{Tasks: a.Tasks, Limit: a.Limit}
	}
	for _, p := range s.PEs {
		out.PEs = append(out.PEs, raftfsm.PENeed{Kind: p.Kind, PerProc: p.PerProc})
	}
	if e := s.Elastic; e != nil {
		out.Elastic = &raftfsm.ElasticSpec{MinNP: e.MinNP, MaxNP: e.MaxNP, Deadline: e.Deadline, BudgetNH: e.BudgetNH,
			Iterations: e.Iterations, CommHeavy: e.CommHeavy, CheckpointDir: e.CheckpointDir}
	}
	return out
}

func toAPISpec(s raftfsm.JobSpec) api.JobSpec {
	out := api.JobSpec{Cmd: s.Cmd, Env: s.Env, Workdir: s.Workdir, NP: s.NP, PPN: s.PPN, Priority: s.Priority,
		Policy: s.Policy, Relax: s.Relax, Oversubscribe: s.Oversubscribe, PEsDetected: s.PEsDetected, MPI: s.MPI,
		Immediate: s.Immediate, Force: s.Force, MaxAttempts: s.MaxAttempts, Timeout: s.Timeout, Alpha: s.Alpha,
		Name: s.Name, Begin: s.Begin, Batch: s.Batch, Output: s.Output, Error: s.Error, Stdin: s.Stdin, MemPerNode: s.MemPerNode, MemPerRank: s.MemPerRank, CPUsPerRank: s.CPUsPerRank, Partition: s.Partition, Constraint: s.Constraint}
	for _, h := range s.Hostfile {
		out.Hostfile = append(out.Hostfile, api.HostSlots{Host: h.Host, Slots: h.Slots})
	}
	for _, d := range s.Depend {
		out.Depend = append(out.Depend, api.Dependency{Type: d.Type, IDs: d.IDs})
	}
	if a := s.Array; a != nil {
		out.Array = &api.ArraySpec{Tasks: a.Tasks, Limit: a.Limit}
	}
	for _, p := range s.PEs {
		out.PEs = append(out.PEs, api.PENeed{Kind: p.Kind, PerProc: p.PerProc})
	}
	if e := s.Elastic; e != nil {
		out.Elastic = &api.ElasticSpec{MinNP: e.MinNP, MaxNP: e.MaxNP, Deadline: e.Deadline, BudgetNH: e.BudgetNH,
			Iterations: e.Iterations, CommHeavy: e.CommHeavy, CheckpointDir: e.CheckpointDir}
	}
	return out
}

func toPlacementRequest(r api.AllocRequest) placement.Request {
	out := placement.Request{N: r.NP, PPN: r.PPN, CPUsPerProc: r.CPUsPerRank, Policy: r.Policy, Relax: r.Relax, Oversubscribe: r.Oversubscribe,
		Alpha: r.Alpha, WLT: r.WLT, WBW: r.WBW, Seed: r.Seed, LoadThreshold: r.LoadThreshold, Force: r.Force}
	for _, h := range r.Hostfile {
		out.Hostfile = append(out.Hostfile, placement.HostSlots{Host: h.Host, Slots: h.Slots})
	}
	for _, p := range r.PEs {
		out.PEs = append(out.PEs, placement.PENeed{Kind: p.Kind, PerProc: p.PerProc})
	}
	if w := r.Attr; w != nil {
		out.Attr = &placement.AttrWeights{Load: w.Load, CPUUtil: w.CPUUtil, NetFlow: w.NetFlow, MemAvail: w.MemAvail,
			Cores: w.Cores, MHz: w.MHz, MemTotal: w.MemTotal, Users: w.Users, Now: w.Now, M1: w.M1, M5: w.M5, M15: w.M15}
	}
	return out
}

func toAPIDecision(d placement.Decision) api.AllocDecision {
	out := api.AllocDecision{Hosts: []api.JobHost{}, Degraded: d.Degraded, DegradedReason: d.DegradedReason,
		Wait: d.Wait, WaitReason: d.WaitReason, Score: toAPIScore(d.Score)}
	for _, h := range d.Hosts {
		out.Hosts = append(out.Hosts, api.JobHost{Node: h.Node, Procs: h.NP})
	}
	return out
}

func toAPIScore(b placement.Breakdown) api.AllocScore {
	out := api.AllocScore{Policy: b.Policy, Relax: b.Relax,
		Nodes: []api.AllocNodeScore{}, C: b.C, N: b.N, CRef: b.CRef, NRef: b.NRef, CNorm: b.CNorm, NNorm: b.NNorm,
		Alpha: b.Alpha, Beta: b.Beta, T: b.T, PaperT: b.PaperT, MeanAvailMbps: b.MeanAvailMbps, Pairs: b.Pairs,
		MeasuredPairs: b.MeasuredPairs, Candidates: b.Candidates}
	for _, n := range b.Nodes {
		out.Nodes = append(out.Nodes, api.AllocNodeScore{Node: n.Node, CL: n.CL, Slots: n.Slots, Procs: n.NP})
	}
	for _, ps := range b.PairScores {
		out.PairScores = append(out.PairScores, api.AllocPairScore{A: ps.A, B: ps.B, OfferMbps: ps.OfferMbps, Measured: ps.Measured, Cost: ps.Cost})
	}
	for _, c := range b.Considered {
		out.Considered = append(out.Considered, api.AllocCandidate{Nodes: c.Nodes, C: c.C, N: c.N, CNorm: c.CNorm, NNorm: c.NNorm, T: c.T, Chosen: c.Chosen})
	}
	if len(b.Considered) > 0 {
		out.Why = b.Why()
	}
	return out
}

func toAPIMeans(m nodestate.Means) api.Means {
	return api.Means{Now: m.Now, M1: m.M1, M5: m.M5, M15: m.M15}
}

func toAPINode(e nodestate.Entry) api.Node {
	s := e.State
	n := api.Node{
		Name: s.Name, Addr: s.Addr, Status: string(e.Status), Hostname: s.Static.Hostname, CPUModel: s.Static.CPUModel,
		Cores: s.Static.Cores, Threads: s.Static.Threads, MHz: s.Static.MHz, MemTotal: s.Static.MemTotal,
		Load: toAPIMeans(s.Dyn.Load), CPUUtil: toAPIMeans(s.Dyn.CPUUtil), MemAvail: toAPIMeans(s.Dyn.MemAvail),
		NetFlow: toAPIMeans(s.Dyn.NetFlow), NetRx: s.Dyn.NetRxBytesPerSec, NetTx: s.Dyn.NetTxBytesPerSec, Users: s.Dyn.Users, PEs: []api.PE{}, Switch: s.Static.Switch,
		HTTPPort: s.HTTPPort, RaftPort: s.RaftPort, Confined: s.Static.Confined, Unconfined: s.Static.Unconfined, Features: s.Static.Features,
	}
	n.Health = "ok"
	if s.Raft.Fault != "" {
		n.Health, n.Unhealthy = "unhealthy", s.Raft.Fault
	}
	switch ri := s.Raft; {
	case ri.Member && ri.Voter:
		n.Role = "server-voter"
	case ri.Member:
		n.Role = "server-nonvoter"
	case ri.Client:
		n.Role = "client"
	}
	if s.Dyn.SampledAt > 0 {
		n.Sampled = time.UnixMilli(s.Dyn.SampledAt).UTC()
	}
	for _, pe := range s.Static.PEs {
		n.PEs = append(n.PEs, api.PE{Kind: pe.Kind, Model: pe.Model, Count: pe.Count, MemBytes: pe.MemBytes})
	}
	return n
}
