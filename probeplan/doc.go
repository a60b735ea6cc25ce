// Package probeplan decides the measurements between nodes: which pairs
// of nodes test their bandwidth in which round, how much probe traffic
// the budget allows, and when the leader relaunches a probe process that
// stopped beating. It is pure: every function takes the members, the last
// measurements and the time as arguments, and nothing here opens a
// socket, runs a process or reads a clock. The measuring itself (the
// probe server, the pinger, the samplers) is package probe's.
//
// A Pair is an unordered pair of nodes (NewPair orders its names), the
// key of "when was this link last measured"; a Duty is one directed test,
// From sending to To's probe server.
//
// The leader's bandwidth schedule, once per cycle:
//
//	plan := probeplan.PlanCycle(liveMembers, lastMeasured, budget, now)
//	for _, round := range plan.Rounds {
//		// each node is in at most one pair of a round
//	}
//	unmeasured := probeplan.Unmeasured(liveMembers, lastMeasured) // show, never guess
//
// Above ten nodes the leader plans O(n + s²) tests instead: each node
// against its own switch's ring neighbours, a few tests per switch pair,
// the pairs the network model (netmodel) is unsure of, and exploration
// for nodes of unknown switch; no node and no uplink in two tests of a
// round:
//
//	plan := probeplan.PlanTopoCycle(probeplan.TopoInput{Members: live, Switch: sw, Last: last,
//		Uncertain: model.Disagreements(), Cycle: cycle, Budget: budget, Now: now})
//	duties := probeplan.Orient(plan.Rounds, cycle) // who sends in each test
//
// The probe supervisor, on every leader round:
//
//	restarts, sup = sup.Decide(cfg, now, views) // relaunch orders, with backoff
package probeplan
