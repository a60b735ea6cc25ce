// Package leader is the raft leader's decisions as pure functions, in the
// manner of etcd raft's Ready: each takes a View (raft's desired state,
// gossip's observed state, the time, the configuration) and the leader's
// own memory as an explicit value (Book), and returns the raft commands
// to propose and the next Book. It does no I/O and reads no clock: the
// agent builds the View, proposes what comes back through CarryOut, and
// folds what raft answered (a refused placement, a cycle committed) into
// the next Book with Book.Answered. The core's tests carry their rounds
// out through the same loop, on the FSM alone; its scenarios are data
// files under testdata/scenarios (the language is in their README), each
// command followed by the decisions it caused, regenerated with
// go test ./leader -run Scenarios -rewrite.
//
//	gossip (nodes, liveness,            raft FSM (jobs, probes,
//	probe beats, links)                 duties, settings)
//	         │ agent converts                │
//	         ▼                               ▼
//	┌──────────────────── View + Book ─────────────────────┐
//	│ leader core (this package, pure)                     │
//	│   Schedule     dead hosts, barrier, co-alloc timeout,│
//	│                placement + wait reasons, elastic     │
//	│   Probes       relaunches, bandwidth cycles          │
//	│   CollectJobs  purge of finished jobs                │
//	│   Membership   add servers, wanted clients, voters   │
//	└──────────────── Commands + Actions + next Book ──────┘
//	         │ agent proposes (agent/leading.go)
//	         ▼
//	raft log ──► FSM on every node ──► node reconcilers
//	(jobs: reserve, launch, kill; probes: relaunch, duties)
//	         │
//	         ▼
//	processes (MPI ranks, probe children) ──► gossip ──► (top)
//
// Every command is idempotent and keyed (job and attempt, probe
// generation, cycle), so a round repeated by a new leader, or one whose
// commands raft refused, is harmless: the next round decides again from
// what raft holds.
package leader
