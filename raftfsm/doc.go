// Package raftfsm is shoal's replicated state machine: the desired state of the cluster (jobs and
// their attempts, allocations, probe duties and relaunches, placement weights) kept by
// hashicorp/raft. It is pure and deterministic: no clock (every timestamp is the proposer's, carried
// in the command), no I/O but the snapshot sink, no map order in state or snapshots, no randomness.
// Applying the same log to two fresh FSMs gives byte-identical snapshots.
//
// # Usage
//
//	fsm := raftfsm.New()
//	r, _ := raft.NewRaft(conf, fsm, logs, stable, snaps, trans)
//
//	data, err := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Now(), raftfsm.SubmitJob{
//		RequestID: reqID, Owner: "alice",
//		Spec: raftfsm.JobSpec{Cmd: []string{"./ring"}, NP: 8, Oversubscribe: true},
//	})
//	f := r.Apply(data, 5*time.Second)
//	if err := f.Error(); err != nil { ... } // raft.ErrLeadershipLost: outcome unknown, retry
//	res := f.Response().(raftfsm.Result)
//	if res.Err != nil { ... }              // refused: errors.Is(res.Err, raftfsm.ErrStaleAttempt)
//
//	st := fsm.State() // deep copy; or fsm.View(func(s *raftfsm.State) { ... })
//	for _, j := range raftfsm.Queue(st) { ... }
//
// # Commands
//
// A log entry is the JSON of Command{V: 1, Type, At, Body}; Decode refuses other versions, unknown
// types and fields, and trailing data. Bodies (the struct named like the constant):
//
//	submit_job        SubmitJob       new queued job; ID from NextJobID (1, 2, ...); dedup by RequestID
//	place_job         PlaceJob        queued → launching with attempt+1 and its hosts (co-allocation step 1)
//	ack_reservation   AckReservation  an allocated node reserved its slots
//	start_job         StartJob        launching → running once every node acked (the barrier, step 2)
//	finish_attempt    FinishAttempt   exit 0 → done; other codes → failed (the program's fault: no retry)
//	fail_attempt      FailAttempt     attempt failed for an outside reason → queued again, or failed
//	reject_job        RejectJob       queued → failed (cannot be placed, e.g. an --immediate job)
//	kill_job          KillJob         → killed, by the owner or root
//	set_probe_duties  SetProbeDuties  bandwidth-test rounds of a probe cycle
//	probe_restart     ProbeRestart    order a probe relaunch (compare-and-swap on its generation)
//	set_settings      SetSettings     placement weights, validated
//	set_limits        SetLimits       per-user limits that submit_job checks (limits.go)
//	remove_node       RemoveNode      a node gone for good: fail its attempts with retry
//	node_restarted    NodeRestarted   a node's agent began a new life: fail with retry the attempts it joined, but those it adopted
//	report_progress   ReportProgress  the iteration a running attempt's program reached (monotone)
//	resize_job        ResizeJob       ask an elastic job's attempt to checkpoint for a new count
//	purge_jobs        PurgeJobs       drop finished jobs past their retention
//	set_wait_reason   SetWaitReason   why a queued job waits, shown on every node ("" clears it)
//	record_usage      RecordUsage     what an attempt used on a node (its cgroup: CPU, peak memory, wall,
//	                                  OOM kills); an OOM kill fails the attempt with its reason, no retry
//	record_step       RecordStep      a batch attempt's MPI launch (job step N) started or ended (step.go)
//	set_switches      SetSwitches     the switches the leader inferred for nodes that declare none (switches.go)
//	batch             Batch           many of the commands above in one entry, applied in order, each on its
//	                                  own; StopAtRefusal ends it at the first refusal (batch.go)
//
// # Job states
//
//	submit_job ─▶ queued ──place_job──▶ launching ──start_job──▶ running ──finish_attempt(0)──▶ done
//	               ▲  │                    │      (all acked)       │
//	               │  │                    └───── fail_attempt ─────┼──finish_attempt(≠0)──▶ failed
//	               │  │                                 │           │
//	               └──┼── retry && attempt < max ◀──────┘           │
//	                  │                    (otherwise) ──────────────┼───────────────────▶ failed
//	                  └── reject_job ────────────────────────────────┼───────────────────▶ failed
//	kill_job (owner or root): queued, launching, running ───────────┴───────────────────▶ killed
//
// As a table (every other pair is refused, and a terminal job never changes again):
//
//	queued    → launching  place_job      attempt = current+1, hosts hold exactly np processes
//	launching → running    start_job      every allocated node acked (ack_reservation)
//	launching → done/failed finish_attempt every node acked (the launcher exited before start_job)
//	running   → done       finish_attempt exit code 0
//	running   → failed     finish_attempt exit code ≠ 0 (the program failed: no retry)
//	launching,
//	running   → queued     fail_attempt   retry and attempt < max_attempts (remove_node, node_restarted do this)
//	launching,
//	running   → failed     fail_attempt   no retry, or attempts exhausted
//	queued    → failed     reject_job, or record_usage with an OOM kill of the attempt just requeued
//	queued,
//	launching,
//	running   → killed     kill_job
//
// Elastic jobs add one edge: running → queued by finish_attempt(75) when the attempt
// reported progress or was asked to resize (resize_job). That attempt ends "checkpointed" and does
// not count against max_attempts; the next place_job may use any process count within the job's
// MIN:MAX, and a count other than the target is written to the job's resize history with the
// placement's reason. Exit 75 from a fixed-size job is an ordinary failure.
//
// "placing" is in the vocabulary of the job JSON but the FSM never enters it: placement is one
// command. Every attempt records its own state (launching, running, done, failed, killed), hosts,
// head node, acks and times; Job.Attempt is the current one and only it can be live.
//
// # Exactly once
//
// Fencing: a command that names an attempt other than the job's current one, or the current one
// after it ended, is refused with ErrStaleAttempt and changes nothing, so two live attempts of a
// job never exist and a late message from a dead attempt cannot touch the next. Idempotence: raft's
// ErrLeadershipLost leaves the outcome unknown, so proposers re-propose; a command that repeats a
// change already made succeeds with Result.Noop (submit returns the same job ID, the same ack,
// start, finish, fail, kill or allocation is a no-op), and probe_restart is a compare-and-swap.
// Every refused command leaves the state untouched: handlers change copies and commit at the end.
//
// # Snapshots
//
// Snapshot deep-copies the state under the lock; Persist writes canonical JSON
// ({"v":1,"index":N,"state":{...}} with jobs sorted by ID and probes by node and kind; a task of
// an array names the task whose spec it shares in spec_of instead of repeating it); Restore
// replaces everything, or nothing when the snapshot is unreadable or holds a record no command
// could make (records.go).
//
// # Finished jobs
//
// After a command that ends jobs or submits one, the owners concerned keep at most
// Limits.FinishedJobs finished jobs: the oldest beyond leave in the same entry (finished.go).
package raftfsm
