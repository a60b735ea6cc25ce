// Package netmodel is the network model behind O(n + s²) bandwidth tests,
// which measure a large cluster in minutes where all pairs take hours:
// each node's switch (declared with --switch, or
// inferred from the measured bandwidths), each node's link capacity
// (measured against peers on its own switch), each switch pair's capacity
// (a few tests between the two switches), and from those a derived
// bandwidth for every pair that was not tested directly.
//
// It is pure: measurements, declarations and configuration go in, an
// assignment and a model come out; no clock, no randomness, no I/O. It
// imports nothing of shoal but probe's Pair type and internal/pairmodel,
// which derives every pair from the model's Tables. The leader builds it
// from the network rows at every cycle to plan the tests
// (probeplan.PlanTopoCycle) and from raft's recorded switches at every
// placement to fill derived links (leader.Snapshot).
//
//	ms := []netmodel.Measurement{{A: "n1", B: "n2", PeakMbps: 940, AvailMbps: 900, BWAt: t}, ...}
//	asg := netmodel.Infer(nodes, declared, ms, netmodel.DefaultConfig())
//	m := netmodel.Build(asg, ms, netmodel.DefaultConfig())
//	est := m.Pair("n1", "n7")  // est.Known, est.PeakMbps, est.Uncertain
//	retest := m.Disagreements() // measured pairs the model does not explain
//
// docs/design/network-model.md describes the inference, its failure modes and
// the figures of the planner it feeds.
package netmodel
