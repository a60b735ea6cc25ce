// Package alloc names what a job asks of the cluster's nodes and what it
// is given: a hostfile's lines (HostSlots) and the processing elements
// each process needs (PENeed) in a job's spec, and a Host, all of a job's
// processes on one node, in its allocation. The replicated state stores
// these types and placement reads and answers in the same ones, so the
// leader hands a stored spec to placement, and placement's answer to
// raft, without converting either.
//
// It sits apart from both because either direction of import would tie
// one to the other: raftfsm importing placement would make the stored
// format follow the placement engine's types, and placement importing
// raftfsm would link raft into a pure function of a snapshot. The JSON
// keys are raftfsm's stored format: raft logs and snapshots written
// before this package existed decode into it, and they must never change.
//
// It imports nothing, so every package of the pure core can use it.
package alloc
