package main

import (
	"cmp"
	"slices"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/natsort"
)

// The listings show nodes in natural order (n2 before n10), whatever order
// the agent answers in: gossip keeps names as plain strings. Each sorts a
// copy, so a caller's slice keeps its order.

func byNodeName(ns []api.Node) []api.Node {
	out := slices.Clone(ns)
	slices.SortStableFunc(out, func(a, b api.Node) int { return natsort.Compare(a.Name, b.Name) })
	return out
}

func byMemberName(ms []api.Member) []api.Member {
	out := slices.Clone(ms)
	slices.SortStableFunc(out, func(a, b api.Member) int { return natsort.Compare(a.Name, b.Name) })
	return out
}

// byPair orders pairs by their row (From), then column (To).
func byPair(ps []api.NetPair) []api.NetPair {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b api.NetPair) int {
		return cmp.Or(natsort.Compare(a.From, b.From), natsort.Compare(a.To, b.To))
	})
	return out
}

// byProbeNode orders probes by node, keeping each node's probes in the
// agent's order (nodestate, latency, bandwidth).
func byProbeNode(ps []api.ProbeInfo) []api.ProbeInfo {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b api.ProbeInfo) int { return natsort.Compare(a.Node, b.Node) })
	return out
}
