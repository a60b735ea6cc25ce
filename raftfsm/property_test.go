package raftfsm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// randomCommand draws a command that usually fits the state (an existing job, its current or next
// attempt, one of its nodes) and sometimes does not, so that both the allowed and the refused
// transitions are exercised.
func randomCommand(r *rand.Rand, s *State, nextReq *int) (string, any) {
	nodes := []string{"a", "b", "c", "d"}
	users := []string{"alice", "bob", "root"}
	id := uint64(r.IntN(int(s.NextJobID)) + 1)
	var live []uint64
	for _, jid := range s.SortedJobIDs() {
		if s.Jobs[jid].State.Live() {
			live = append(live, jid)
		}
	}
	if len(live) > 0 && r.IntN(2) == 0 {
		id = live[r.IntN(len(live))]
	}
	att := r.IntN(4)
	node := nodes[r.IntN(len(nodes))]
	if j := s.Jobs[id]; j != nil && r.IntN(5) > 0 {
		att = j.Attempt
		if j.State == StateQueued {
			att++
		}
		if a := j.Current(); a != nil && r.IntN(4) > 0 {
			node = a.Hosts[r.IntN(len(a.Hosts))].Node
			if p := a.Pending(); len(p) > 0 && r.IntN(2) == 0 {
				node = p[0]
			}
		}
	}
	switch k := r.IntN(54); {
	case k < 6:
		*nextReq++
		req := *nextReq
		if r.IntN(4) == 0 && req > 1 {
			req = r.IntN(req-1) + 1 // a retried submit
		}
		spec := JobSpec{Cmd: []string{"x"}, NP: 4, MaxAttempts: r.IntN(3)}
		if r.IntN(3) == 0 {
			spec.Elastic = &ElasticSpec{MinNP: 2, MaxNP: 8, Iterations: 100, Deadline: secs(60)}
		}
		switch r.IntN(6) {
		case 0:
			spec.Array = &ArraySpec{Tasks: []int{0, 1, 2}, Limit: r.IntN(2)}
		case 1:
			spec.Depend = []Dependency{{Type: DependTypes[r.IntN(3)], IDs: []uint64{id}}}
		}
		return CmdSubmitJob, SubmitJob{RequestID: fmt.Sprintf("req-%d", req), Owner: users[r.IntN(2)], Spec: spec}
	case k < 12:
		a, b := nodes[r.IntN(4)], nodes[r.IntN(4)]
		hosts := []Host{{Node: a, NP: 2}, {Node: b, NP: 2}}
		if a == b {
			hosts = []Host{{Node: a, NP: 4}}
		}
		return CmdPlaceJob, PlaceJob{ID: id, Attempt: att, Hosts: hosts}
	case k < 20:
		return CmdAckReservation, AckReservation{ID: id, Attempt: att, Node: node}
	case k < 25:
		return CmdStartJob, StartJob{ID: id, Attempt: att}
	case k < 29:
		code := []int{0, 1, ExitCheckpointed}[r.IntN(3)]
		return CmdFinishAttempt, FinishAttempt{ID: id, Attempt: att, ExitCode: &code}
	case k < 33:
		return CmdFailAttempt, FailAttempt{ID: id, Attempt: att, Reason: "timeout", Retry: r.IntN(4) > 0}
	case k < 35:
		if j := s.Jobs[id]; j != nil && j.ArrayJobID == id && r.IntN(2) == 0 {
			return CmdKillJob, KillJob{ID: id, User: users[r.IntN(3)], Array: true}
		}
		return CmdKillJob, KillJob{ID: id, User: users[r.IntN(3)]}
	case k < 36:
		return CmdRejectJob, RejectJob{ID: id, Reason: "no room"}
	case k < 37:
		return CmdRemoveNode, RemoveNode{Node: node}
	case k < 41:
		comm := r.Float64()
		return CmdReportProgress, ReportProgress{ID: id, Attempt: att, Iter: int64(r.IntN(100)), Comm: &comm}
	case k < 44:
		for _, jid := range s.SortedJobIDs() { // a running elastic job, when there is one
			if j := s.Jobs[jid]; j.State == StateRunning && j.Elastic != nil && r.IntN(2) == 0 {
				id, att = jid, j.Attempt
			}
		}
		return CmdResizeJob, ResizeJob{ID: id, Attempt: att, TargetNP: 2 * (1 + r.IntN(4)), Reason: "deadline"}
	case k < 45:
		// Purge the oldest finished job once many have piled up, and at times one that is not.
		ids := PurgeCandidates(s, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 0)
		if len(ids) < 40 {
			return CmdPurgeJobs, PurgeJobs{IDs: []uint64{id}}
		}
		return CmdPurgeJobs, PurgeJobs{IDs: []uint64{ids[0], id}}
	case k < 48:
		// The leader's reasons repeat (a no-op) or change, now and then to "" (cleared).
		reasons := []string{"", "cluster overloaded", "not enough free slots", "not enough free slots"}
		if q := Queue(s); len(q) > 0 && r.IntN(3) > 0 {
			id = q[r.IntN(len(q))].ID
		}
		return CmdSetWaitReason, SetWaitReason{ID: id, Reason: reasons[r.IntN(len(reasons))]}
	case k < 49:
		return CmdNodeRestarted, NodeRestarted{Node: node}
	case k < 51:
		if q := Queue(s); len(q) > 0 && r.IntN(3) > 0 {
			id = q[r.IntN(len(q))].ID
		}
		j := s.Jobs[id]
		hold := HoldJob{ID: id, User: users[r.IntN(3)], Hold: r.IntN(2) == 0, Array: j != nil && j.ArrayJobID == id && r.IntN(2) == 0}
		if id%4 == 2 && !hold.Array {
			// The same target requeued instead, held or not: a running one ends its attempt.
			return CmdRequeueJob, RequeueJob{ID: id, User: hold.User, Hold: hold.Hold}
		}
		if id%4 == 1 {
			// The same target, its time limit changed instead (by its owner, another user or
			// root), chosen without a draw so that the draws after it stay as they were.
			return CmdUpdateJob, UpdateJob{ID: id, User: hold.User, Array: hold.Array, Timeout: time.Duration(id%3) * 30 * time.Minute}
		}
		return CmdHoldJob, hold
	case k < 52:
		// A node's usage of an attempt, now and then with an OOM kill that fails the job.
		u := NodeUsage{Node: node, CPUSeconds: float64(r.IntN(100)), MaxRSSBytes: uint64(r.IntN(1 << 20)), Final: r.IntN(2) == 0}
		if r.IntN(4) == 0 {
			u.OOMKills, u.OOM = 1, "out of memory on "+node+" (limit 64M, peak 64M)"
		}
		return CmdRecordUsage, RecordUsage{ID: id, Attempt: att, Usage: u}
	default:
		return CmdProbeRestart, ProbeRestart{Node: node, Kind: ProbeKinds[r.IntN(3)], Reason: "crash", Generation: uint64(r.IntN(3))}
	}
}

// randomOpsCommand draws one of the commands of node and history upkeep. It has a random
// source of its own, so adding it left randomCommand's draws, and the corners they reach, as
// they were.
func randomOpsCommand(r *rand.Rand) (string, any) {
	node := []string{"a", "b", "c", "d"}[r.IntN(4)]
	switch r.IntN(3) {
	case 0:
		return CmdDrainNode, DrainNode{Node: node, Deadline: time.Duration(r.IntN(3)) * time.Minute}
	case 1:
		return CmdUndrainNode, UndrainNode{Node: node}
	}
	// Records of jobs that ended before a time in the log's span (the harness stamps one
	// second per entry from t0).
	return CmdPurgeHistory, PurgeHistory{Before: t0.Add(time.Duration(r.IntN(800)) * time.Second)}
}

// randomPartitionCommand draws a partition set or deleted, now and then by
// a user who may not, with a random source of its own (like
// randomOpsCommand). Its partitions are never the default, so the jobs
// the other commands submit stay outside them.
func randomPartitionCommand(r *rand.Rand) (string, any) {
	user := RootUser
	if r.IntN(4) == 0 {
		user = "alice"
	}
	name := []string{"p1", "p2"}[r.IntN(2)]
	if r.IntN(3) == 0 {
		return CmdDelPartition, DeletePartition{User: user, Name: name}
	}
	var nodes []string
	for _, n := range []string{"a", "b", "c", "d"} {
		if r.IntN(2) == 0 {
			nodes = append(nodes, n)
		}
	}
	return CmdSetPartition, SetPartition{User: user, Partition: Partition{Name: name, Nodes: nodes,
		MaxTime: time.Duration(r.IntN(3)) * time.Hour, MaxNodes: r.IntN(3)}}
}

// randomStepCommand draws a step's start or end for a job's attempt, with
// a random source of its own (like randomOpsCommand).
func randomStepCommand(r *rand.Rand, s *State) (string, any) {
	ids := make([]uint64, 0, len(s.Jobs))
	for id, j := range s.Jobs {
		if len(j.Attempts) > 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return CmdRecordStep, RecordStep{ID: 1, Attempt: 1, Cmd: []string{"mpiexec"}} // refused
	}
	slices.Sort(ids)
	j := s.Jobs[ids[r.IntN(len(ids))]]
	att := 1 + r.IntN(len(j.Attempts))
	n := len(j.Attempts[att-1].Steps)
	if n > 0 && r.IntN(2) == 0 {
		code := r.IntN(3)
		return CmdRecordStep, RecordStep{ID: j.ID, Attempt: att, Step: r.IntN(n), End: true, ExitCode: &code}
	}
	return CmdRecordStep, RecordStep{ID: j.ID, Attempt: att, Step: n, Cmd: []string{"mpiexec", "./a.out"}, Nodes: "a"}
}

// randomSwitchCommand draws a set of inferred switches, with a random source of its own (like
// randomOpsCommand).
func randomSwitchCommand(r *rand.Rand) (string, any) {
	sw := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		switch r.IntN(4) {
		case 0:
		case 1:
			sw[n] = "~a"
		case 2:
			sw[n] = "~c"
		default:
			if r.IntN(8) == 0 {
				sw[n] = "" // refused
			}
		}
	}
	return CmdSetSwitches, SetSwitches{Switches: sw}
}

func TestProperty_RandomLogs(t *testing.T) {
	t.Parallel()
	succeeded := map[string]int{}
	reached := map[JobState]int{}
	maxAttempt := 0
	for seed := uint64(1); seed <= 12; seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		ops := rand.New(rand.NewPCG(seed, 43))
		steps := rand.New(rand.NewPCG(seed, 44))
		switches := rand.New(rand.NewPCG(seed, 45))
		parts := rand.New(rand.NewPCG(seed, 46))
		h := newHarness(t)
		nextReq := 0
		for i := 0; i < 800; i++ {
			typ, body := randomCommand(r, h.f.State(), &nextReq)
			if i%16 == 15 {
				typ, body = randomOpsCommand(ops)
			}
			if i%16 == 7 {
				typ, body = randomStepCommand(steps, h.f.State())
			}
			if i%32 == 11 {
				typ, body = randomSwitchCommand(switches)
			}
			if i%64 == 27 {
				typ, body = randomPartitionCommand(parts)
			}
			before := stateBytes(t, h.f)
			res := h.do(typ, body) // checks the invariants
			if res.Err == nil && !res.Noop {
				succeeded[typ]++
			}
			if res.Err != nil && !bytes.Equal(before, stateBytes(t, h.f)) {
				t.Fatalf("seed %d step %d: refused %s changed the state: %v", seed, i, typ, res.Err)
			}
			if res.Noop && !bytes.Equal(before, stateBytes(t, h.f)) {
				t.Fatalf("seed %d step %d: no-op %s changed the state", seed, i, typ)
			}
			if i%50 == 49 {
				snap := snapshotBytes(t, h.f)
				g := New()
				if err := g.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(snapshotBytes(t, g), snap) {
					t.Fatalf("seed %d step %d: restore not identical", seed, i)
				}
			}
		}
		for _, j := range h.f.State().Jobs {
			reached[j.State]++
			maxAttempt = max(maxAttempt, j.Attempt)
		}
		replay := New()
		for _, l := range h.log {
			replay.Apply(l)
		}
		if !bytes.Equal(snapshotBytes(t, replay), snapshotBytes(t, h.f)) {
			t.Fatalf("seed %d: replay differs", seed)
		}
	}
	// The generator must reach the interesting corners, or the test proves little.
	for _, typ := range CommandTypes {
		// A batch has a property test of its own (batch_test.go).
		if typ != CmdSetProbeDuties && typ != CmdSetSettings && typ != CmdSetLimits && typ != CmdBatch && succeeded[typ] == 0 {
			t.Errorf("no %s ever succeeded: %v", typ, succeeded)
		}
	}
	for _, st := range []JobState{StateQueued, StateDone, StateFailed, StateKilled} {
		if reached[st] == 0 {
			t.Errorf("no job ended a run %s: %v", st, reached)
		}
	}
	if maxAttempt < 2 {
		t.Errorf("no job was retried (max attempt %d)", maxAttempt)
	}
	t.Logf("succeeded %v; final states %v; max attempt %d", succeeded, reached, maxAttempt)
}
