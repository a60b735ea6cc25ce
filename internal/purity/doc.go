// Package purity holds no code: its test checks that shoal's pure core
// (the leader, the network model, placement, the replicated state
// machine, the elastic decision, the probe planners, the observed state's
// schema and the allocation's vocabulary) links no sampler, process
// runner or transport anywhere in its dependency graph, not only among
// its direct imports. `make core-pure` runs the same check.
//
// net and syscall stay allowed: they arrive with the standard library and
// with raft's FSM interface, and what keeps the core pure is that it
// never runs anything of theirs, which the leader's own purity test
// checks for its direct imports.
package purity
