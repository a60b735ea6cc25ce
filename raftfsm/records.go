package raftfsm

import (
	"fmt"
	"slices"
)

// A snapshot is admin input (shoal operator snapshot restore) and every node's reconciler trusts
// the state it restores to as it trusts the log: a head launches what the state says is running
// and keys its bookkeeping by (job, attempt). A record no sequence of commands could have made
// turns that trust against the cluster (an attempt numbered other than its place in the job's
// attempts was relaunched by its head every few seconds, as the head forgot it as "ended" on
// each sweep). So Restore checks each record as the commands that build it check their input,
// and refuses the whole snapshot when one fails.

// checkJobRecord refuses a job record that the commands could not have made: its shape, which
// the reconcilers rely on. The error names the job and the broken rule. A spec the submit rules
// of today would refuse is checked apart (checkSpecs), on the operator's restore only: raft
// restores its own snapshots at every start and on every InstallSnapshot, and a rule tightened
// by an upgrade must not keep a node from starting on a state it made itself.
func checkJobRecord(j *Job) error {
	if err := checkJobShape(j); err != nil {
		return fmt.Errorf("%w: job %d: %w", ErrMalformed, j.ID, err)
	}
	return nil
}

// jobStates are the states a job can be in (placing is vocabulary only, checkpointed is an
// attempt's).
var jobStates = []JobState{StateQueued, StateLaunching, StateRunning, StateDone, StateFailed, StateKilled}

// attemptStates are the states an attempt can be in.
var attemptStates = []JobState{StateLaunching, StateRunning, StateDone, StateFailed, StateKilled, StateCheckpointed}

func checkJobShape(j *Job) error {
	if err := nonEmpty("owner", j.Owner); err != nil {
		return err
	}
	if err := nonEmpty("request_id", j.RequestID); err != nil {
		return err
	}
	if !slices.Contains(jobStates, j.State) {
		return fmt.Errorf("state %q is not a job state", j.State)
	}
	if j.Spec.Array != nil {
		return fmt.Errorf("a job's own spec carries no array (only the submit does)")
	}
	if (j.Elastic != nil) != (j.Spec.Elastic != nil) {
		return fmt.Errorf("an elastic record goes with an elastic spec and only with one")
	}
	if j.ArrayJobID > j.ID || (j.ArrayJobID == 0 && (j.ArrayTaskID != 0 || j.ArrayLimit != 0)) ||
		j.ArrayTaskID < 0 || j.ArrayTaskID > MaxArrayTaskID || j.ArrayLimit < 0 {
		return fmt.Errorf("array %d task %d limit %d: an array's ID is its first task's, at most the task's own", j.ArrayJobID, j.ArrayTaskID, j.ArrayLimit)
	}
	if j.Attempt != len(j.Attempts) {
		return fmt.Errorf("current attempt %d of %d attempts: the current attempt is the last one", j.Attempt, len(j.Attempts))
	}
	if j.failures() > j.Spec.MaxAttempts {
		return fmt.Errorf("%d attempts counted against max_attempts %d", j.failures(), j.Spec.MaxAttempts)
	}
	for i := range j.Attempts {
		a := &j.Attempts[i]
		if a.N != i+1 {
			return fmt.Errorf("attempts[%d] is numbered %d: an attempt's number is its place in the job's attempts", i, a.N)
		}
		if err := checkAttempt(a, &j.Spec); err != nil {
			return fmt.Errorf("attempt %d: %w", a.N, err)
		}
		if a.N < j.Attempt && !a.Ended() {
			return fmt.Errorf("attempt %d is %s but attempt %d came after it: only the current attempt may be live", a.N, a.State, j.Attempt)
		}
	}
	cur := j.Current()
	if j.State.Live() && (cur == nil || cur.State != j.State) {
		return fmt.Errorf("the job is %s and its current attempt is not", j.State)
	}
	if !j.State.Live() && cur != nil && !cur.Ended() {
		return fmt.Errorf("the job is %s but its attempt %d is %s", j.State, cur.N, cur.State)
	}
	return nil
}

// checkAttempt checks an attempt as place_job, ack_reservation and start_job check theirs.
func checkAttempt(a *Attempt, sp *JobSpec) error {
	if !slices.Contains(attemptStates, a.State) {
		return fmt.Errorf("state %q is not an attempt state", a.State)
	}
	if err := validateHosts(a.Hosts, sp); err != nil {
		return err
	}
	if !a.Holds(a.Head) {
		return fmt.Errorf("head %q is not one of the hosts", a.Head)
	}
	if !slices.IsSorted(a.Acks) || len(slices.Compact(slices.Clone(a.Acks))) != len(a.Acks) {
		return fmt.Errorf("acks %v are not sorted and distinct", a.Acks)
	}
	for _, n := range a.Acks {
		if !a.Holds(n) {
			return fmt.Errorf("node %q acked but is not one of the hosts", n)
		}
	}
	if a.State == StateRunning && !a.AllAcked() {
		return fmt.Errorf("running while %v never reserved", a.Pending())
	}
	for i, g := range a.GPUs {
		switch {
		case i > 0 && a.GPUs[i-1].Node >= g.Node:
			return fmt.Errorf("gpus are not sorted by node and distinct at %q", g.Node)
		case !a.Acked(g.Node):
			return fmt.Errorf("node %q holds GPUs but never reserved", g.Node)
		case len(g.Indices) != a.GPUsNeeded(*sp, g.Node):
			return fmt.Errorf("node %q holds %d GPUs, its processes need %d", g.Node, len(g.Indices), a.GPUsNeeded(*sp, g.Node))
		}
		for k, x := range g.Indices {
			if x < 0 || x > MaxGPUIndex || (k > 0 && g.Indices[k-1] >= x) {
				return fmt.Errorf("node %q: GPU indices %v are not sorted, distinct and within 0..%d", g.Node, g.Indices, MaxGPUIndex)
			}
		}
	}
	return nil
}

// checkProbeRecord refuses a probe record set_probe_duties or probe_restart could not have made.
func checkProbeRecord(p *Probe) error {
	if p.Node == "" || !knownProbeKind(p.Kind) {
		return fmt.Errorf("%w: probe %q of node %q: want a node and one of %v", ErrMalformed, p.Kind, p.Node, ProbeKinds)
	}
	return nil
}

// checkSpecs refuses a state holding a job whose spec submit_job would refuse (CheckSnapshot:
// an operator's backup, admin input).
func checkSpecs(st *State) error {
	for _, id := range st.SortedJobIDs() {
		sp := st.Jobs[id].Spec.clone()
		normalizeSpec(&sp)
		if err := validateSpec(&sp); err != nil {
			return fmt.Errorf("%w: job %d: %w", ErrMalformed, id, err)
		}
	}
	return nil
}
