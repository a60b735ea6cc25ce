// Package alloc names what a job is given of the cluster: a Host is all
// of one job's processes on one node. Placement answers in Hosts and the
// replicated state stores the same Hosts in an attempt, so the leader
// hands placement's answer to raft without converting it.
//
// It sits apart from both because either direction of import would tie
// one to the other: raftfsm importing placement would make the stored
// format follow the placement engine's types, and placement importing
// raftfsm would link raft into a pure function of a snapshot. The JSON
// keys are raftfsm's stored format ("node", "procs"): raft logs and
// snapshots written before this package existed decode into it, and they
// must never change.
//
// It imports nothing, so every package of the pure core can use it.
package alloc
