package raftfsm

import (
	"testing"
	"time"
)

// scriptedTrace drives a small cluster's day through every command type, refusals included, and
// returns the harness holding its log.
func scriptedTrace(t testing.TB) *harness {
	h := newHarness(t)
	zero, three := 0, 3
	alpha := 0.5
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-1", Owner: "alice", Spec: JobSpec{
		Cmd: []string{"./ring", "-v"}, Env: []string{"OMP_NUM_THREADS=1", "UCX_TLS=tcp"}, Workdir: "/home/alice",
		NP: 4, PPN: 2, Priority: 1, Policy: "shoal", Relax: "loc", Oversubscribe: true, MPI: "mpich",
		Timeout: 3600e9, Alpha: &alpha,
	}})
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-2", Owner: "bob", Spec: JobSpec{
		Cmd: []string{"./train"}, NP: 2, PEs: []PENeed{{Kind: "gpu", PerProc: 1}}, Hostfile: []HostSlots{{Host: "gpu1", Slots: 2}}, MaxAttempts: 2,
	}})
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-1", Owner: "alice", Spec: JobSpec{Cmd: []string{"./ring"}, NP: 4}}) // retry: same job
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-3", Owner: "carol", Spec: JobSpec{Cmd: []string{"./now"}, NP: 64, Immediate: true}})
	h.do(CmdRejectJob, RejectJob{ID: 3, Reason: "immediate: needs 64 slots, 12 free"})
	h.do(CmdPlaceJob, PlaceJob{ID: 1, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 2}, {Node: "n2", NP: 2}}})
	h.do(CmdAckReservation, AckReservation{ID: 1, Attempt: 1, Node: "n2"})
	h.do(CmdStartJob, StartJob{ID: 1, Attempt: 1}) // refused: n1 has not acked
	h.do(CmdFailAttempt, FailAttempt{ID: 1, Attempt: 1, Reason: "co-allocation timeout: n1", Retry: true})
	h.do(CmdAckReservation, AckReservation{ID: 1, Attempt: 1, Node: "n1"}) // refused: late
	h.do(CmdPlaceJob, PlaceJob{ID: 1, Attempt: 2, Hosts: []Host{{Node: "n2", NP: 2}, {Node: "n3", NP: 2}}, Head: "n3", Degraded: true, DegradedReason: "n3 oversubscribed by 1"})
	h.do(CmdAckReservation, AckReservation{ID: 1, Attempt: 2, Node: "n3"})
	h.do(CmdAckReservation, AckReservation{ID: 1, Attempt: 2, Node: "n2"})
	h.do(CmdStartJob, StartJob{ID: 1, Attempt: 2})
	h.do(CmdPlaceJob, PlaceJob{ID: 2, Attempt: 1, Hosts: []Host{{Node: "gpu1", NP: 2}}})
	h.do(CmdAckReservation, AckReservation{ID: 2, Attempt: 1, Node: "gpu1"})
	h.do(CmdStartJob, StartJob{ID: 2, Attempt: 1})
	h.do(CmdKillJob, KillJob{ID: 2, User: "alice"}) // refused: not the owner
	h.do(CmdFinishAttempt, FinishAttempt{ID: 2, Attempt: 1, ExitCode: &three})
	h.do(CmdFinishAttempt, FinishAttempt{ID: 1, Attempt: 2, ExitCode: &zero})
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-4", Owner: "dave", Spec: JobSpec{Cmd: []string{"sleep", "1d"}, NP: 1}})
	h.do(CmdKillJob, KillJob{ID: 4, User: "root"})
	h.do(CmdSetSettings, SetSettings{Settings: Settings{Alpha: 0.4, WLT: 0.5, WBW: 0.5, Attr: DefaultSettings().Attr}})
	h.do(CmdSetSettings, SetSettings{Settings: Settings{Alpha: 2, WLT: 0.5, WBW: 0.5}}) // refused
	h.do(CmdSetProbeDuties, SetProbeDuties{Cycle: 1, Rounds: [][]Test{{{"n1", "n2"}, {"n3", "gpu1"}}, {{"n1", "n3"}, {"n2", "gpu1"}}, {{"n1", "gpu1"}, {"n2", "n3"}}}, RoundLen: 10e9})
	h.do(CmdProbeRestart, ProbeRestart{Node: "n2", Kind: ProbeBandwidth, Reason: "exited with signal 9", Generation: 0})
	h.do(CmdProbeRestart, ProbeRestart{Node: "n2", Kind: ProbeBandwidth, Reason: "exited with signal 9", Generation: 0}) // refused: stale
	h.do(CmdProbeRestart, ProbeRestart{Node: "n2", Kind: ProbeBandwidth, Reason: "no heartbeat for 15s", Generation: 1})
	h.do(CmdProbeRestart, ProbeRestart{Node: "gpu1", Kind: ProbeNodeState, Reason: "crashed", Generation: 0})
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-5", Owner: "erin", Spec: JobSpec{Cmd: []string{"./sim"}, NP: 2, Priority: 5}})
	h.do(CmdSetWaitReason, SetWaitReason{ID: 5, Reason: "cluster overloaded: all 4 candidate nodes are above 1.00 load per core"})
	h.do(CmdSetWaitReason, SetWaitReason{ID: 5, Reason: "cluster overloaded: all 4 candidate nodes are above 1.00 load per core"}) // no-op: unchanged
	h.do(CmdSetWaitReason, SetWaitReason{ID: 1, Reason: "not enough free slots"})                                                  // refused: job 1 is done
	h.do(CmdPlaceJob, PlaceJob{ID: 5, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 1}, {Node: "gpu1", NP: 1}}})
	h.do(CmdAckReservation, AckReservation{ID: 5, Attempt: 1, Node: "n1"})
	h.do(CmdAckReservation, AckReservation{ID: 5, Attempt: 1, Node: "gpu1"})
	h.do(CmdStartJob, StartJob{ID: 5, Attempt: 1})
	h.do(CmdRemoveNode, RemoveNode{Node: "gpu1"})
	seventyFive, comm := ExitCheckpointed, 0.1
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-6", Owner: "frank", Spec: JobSpec{Cmd: []string{"./jacobi", "512"}, NP: 2, PPN: 1, MPI: "mpich",
		Elastic: &ElasticSpec{MinNP: 1, MaxNP: 4, Deadline: 600e9, Iterations: 1000}}})
	h.do(CmdPlaceJob, PlaceJob{ID: 6, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 1}, {Node: "n2", NP: 1}}})
	h.do(CmdAckReservation, AckReservation{ID: 6, Attempt: 1, Node: "n1"})
	h.do(CmdAckReservation, AckReservation{ID: 6, Attempt: 1, Node: "n2"})
	h.do(CmdStartJob, StartJob{ID: 6, Attempt: 1})
	h.do(CmdReportProgress, ReportProgress{ID: 6, Attempt: 1, Iter: 20, Comm: &comm})
	h.do(CmdReportProgress, ReportProgress{ID: 6, Attempt: 1, Iter: 10})              // no-op: does not advance
	h.do(CmdResizeJob, ResizeJob{ID: 6, Attempt: 1, TargetNP: 5, Reason: "too many"}) // refused
	h.do(CmdResizeJob, ResizeJob{ID: 6, Attempt: 1, TargetNP: 3, Reason: "deadline: needs 3 nodes (n_p), grown 2 -> 3"})
	h.do(CmdFinishAttempt, FinishAttempt{ID: 6, Attempt: 1, ExitCode: &seventyFive})
	h.do(CmdPlaceJob, PlaceJob{ID: 6, Attempt: 2, Hosts: []Host{{Node: "n1", NP: 1}, {Node: "n2", NP: 1}}, Reason: "only 2 free"})
	h.do(CmdAckReservation, AckReservation{ID: 6, Attempt: 2, Node: "n1"})
	h.do(CmdAckReservation, AckReservation{ID: 6, Attempt: 2, Node: "n2"})
	h.do(CmdStartJob, StartJob{ID: 6, Attempt: 2})
	h.do(CmdReportProgress, ReportProgress{ID: 6, Attempt: 2, Iter: 21})
	h.do(CmdDrainNode, DrainNode{Node: "n2"})
	h.do(CmdDrainNode, DrainNode{Node: "n2"})                  // no-op: drained already
	h.do(CmdDrainNode, DrainNode{Node: "n1", Deadline: 300e9}) // n1's attempts fail from t+5m
	h.do(CmdDrainNode, DrainNode{Node: "n3", Deadline: -1})    // refused
	h.do(CmdUndrainNode, UndrainNode{Node: "n2"})
	h.do(CmdUndrainNode, UndrainNode{Node: "n2"})                         // no-op
	h.do(CmdPurgeJobs, PurgeJobs{IDs: []uint64{3, 4}})                    // jobs 3 and 4 leave their records
	h.do(CmdPurgeHistory, PurgeHistory{Before: t0.Add(20 * time.Second)}) // job 3's record goes
	h.do(CmdPurgeHistory, PurgeHistory{Before: t0.Add(20 * time.Second)}) // no-op
	// Slurm's habits: an array with a name, a begin time and a dependency; hold, release, kill.
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-7", Owner: "grace", Spec: JobSpec{Cmd: []string{"./sweep"}, NP: 1, Name: "sweep",
		Begin: t0.Add(time.Hour), Depend: []Dependency{{Type: DependAfterOK, IDs: []uint64{1}}, {Type: DependSingleton}},
		Array: &ArraySpec{Tasks: []int{0, 2, 4}, Limit: 2}}})
	h.do(CmdHoldJob, HoldJob{ID: 7, User: "grace", Hold: true, Array: true})
	h.do(CmdHoldJob, HoldJob{ID: 8, User: "grace", Hold: false})
	h.do(CmdHoldJob, HoldJob{ID: 8, User: "heidi", Hold: true}) // refused: not the owner
	h.do(CmdKillJob, KillJob{ID: 9, User: "grace"})
	h.do(CmdKillJob, KillJob{ID: 7, User: "grace", Array: true})
	h.do(CmdSubmitJob, SubmitJob{RequestID: "req-8", Owner: "grace", Spec: JobSpec{Cmd: []string{"./post"}, NP: 1,
		Depend: []Dependency{{Type: DependAfterAny, IDs: []uint64{11}}}}}) // refused: a cycle
	h.raw(rawLog(uint64(len(h.log)+1), `{"v":1,"type":"drop_tables","at":"2026-11-22T11:00:00Z","body":{}}`)) // refused
	h.raw(rawLog(uint64(len(h.log)+1), `not json at all`))                                                    // refused
	// The steps of an attempt (appended, so the lines above stay as they were).
	h.do(CmdRecordStep, RecordStep{ID: 6, Attempt: 2, Step: 0, Cmd: []string{"mpiexec", "./a.out"}, Nodes: "n[1-2]"})
	h.do(CmdRecordStep, RecordStep{ID: 6, Attempt: 2, Step: 0, End: true, ExitCode: &zero})
	h.do(CmdRecordStep, RecordStep{ID: 6, Attempt: 2, Step: 2, Cmd: []string{"mpirun"}}) // refused: step 1 comes first
	// Switches the leader inferred (appended too).
	h.do(CmdSetSwitches, SetSwitches{Switches: map[string]string{"n1": "~n1", "n2": "~n1", "n3": "~n3"}})
	h.do(CmdSetSwitches, SetSwitches{Switches: map[string]string{"n2": "~n1", "n1": "~n1", "n3": "~n3"}}) // no-op
	h.do(CmdSetSwitches, SetSwitches{Switches: map[string]string{"n1": ""}})                              // refused
	h.do(CmdSetSwitches, SetSwitches{Switches: map[string]string{"n1": "~n1", "n2": "~n1"}})              // n3 has none now
	// Batches (appended too): each command on its own, a refused one
	// skipped; with StopAtRefusal the first refusal ends the batch.
	one := 1
	h.do(CmdBatch, batchOf(t, false,
		CmdSubmitJob, SubmitJob{RequestID: "req-b1", Owner: "gina", Spec: JobSpec{Cmd: []string{"true"}, NP: 1}},
		CmdSubmitJob, SubmitJob{RequestID: "req-b2", Owner: "gina", Spec: JobSpec{Cmd: []string{"true"}, NP: 1}},
		CmdStartJob, StartJob{ID: 10, Attempt: 1}, // refused: not placed
		CmdPlaceJob, PlaceJob{ID: 10, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 1}}},
		CmdAckReservation, AckReservation{ID: 10, Attempt: 1, Node: "n1"},
		CmdStartJob, StartJob{ID: 10, Attempt: 1}))
	h.do(CmdBatch, batchOf(t, true,
		CmdFinishAttempt, FinishAttempt{ID: 10, Attempt: 1, ExitCode: &one},
		CmdPlaceJob, PlaceJob{ID: 11, Attempt: 2, Hosts: []Host{{Node: "n2", NP: 1}}}, // refused: stale
		CmdPlaceJob, PlaceJob{ID: 11, Attempt: 1, Hosts: []Host{{Node: "n2", NP: 1}}})) // not applied
	h.do(CmdBatch, Batch{})                                                            // refused: empty
	h.do(CmdBatch, Batch{Commands: []BatchItem{{Type: CmdBatch, Body: []byte(`{}`)}}}) // refused: nested
	return h
}

// batchOf builds a batch of (type, body) pairs.
func batchOf(t testing.TB, stop bool, pairs ...any) Batch {
	t.Helper()
	b := Batch{StopAtRefusal: stop}
	for i := 0; i < len(pairs); i += 2 {
		it, err := NewBatchItem(pairs[i].(string), pairs[i+1])
		if err != nil {
			t.Fatal(err)
		}
		b.Commands = append(b.Commands, it)
	}
	return b
}
