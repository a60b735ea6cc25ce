package raftfsm

import (
	"fmt"
	"math"
	"slices"
	"time"
)

func (s *State) submit(at time.Time, b *SubmitJob) (Result, error) {
	if err := nonEmpty("request_id", b.RequestID); err != nil {
		return Result{}, err
	}
	if err := nonEmpty("owner", b.Owner); err != nil {
		return Result{}, err
	}
	if j := s.submitted(b); j != nil {
		if j.Owner != b.Owner {
			return Result{}, fmt.Errorf("%w: request %q is job %d of %q", ErrRequestConflict, b.RequestID, j.ID, j.Owner)
		}
		if j.InArray() {
			return Result{JobID: j.ArrayJobID, Noop: true}, nil
		}
		return Result{JobID: j.ID, Attempt: j.Attempt, Noop: true}, nil
	}
	spec := b.Spec.clone()
	normalizeSpec(&spec)
	if err := validateSpec(&spec); err != nil {
		return Result{}, err
	}
	if err := s.Limits.CheckSpec(&spec); err != nil {
		return Result{}, err
	}
	if err := s.applyPartition(b.Owner, &spec); err != nil {
		return Result{}, err
	}
	if _, err := ParseConstraint(spec.Constraint); err != nil {
		return Result{}, err
	}
	if err := s.checkDependTargets(spec.Depend); err != nil {
		return Result{}, err
	}
	if err := s.checkQuota(b.Owner, &spec); err != nil {
		return Result{}, err
	}
	n := uint64(spec.taskCount())
	if s.NextJobID > math.MaxUint64-n {
		return Result{}, fmt.Errorf("%w: job IDs exhausted", ErrInvalid)
	}
	id := s.NextJobID
	arr := spec.Array
	spec.Array = nil
	for i := range n {
		j := &Job{
			ID: id + i, RequestID: b.RequestID, Owner: b.Owner, Spec: spec.clone(),
			State: StateQueued, SubmittedAt: at, Seq: id + i,
		}
		if arr != nil {
			j.ArrayJobID, j.ArrayTaskID, j.ArrayLimit = id, arr.Tasks[i], arr.Limit
			if i > 0 {
				j.RequestID = arrayRequestID(b.RequestID, arr.Tasks[i])
			}
		}
		if spec.Elastic != nil {
			j.Elastic = &ElasticStatus{TargetNP: spec.NP}
		}
		s.setJob(j)
		s.byRequest[j.RequestID] = j.ID
	}
	s.NextJobID += n
	return Result{JobID: id}, nil
}

// normalizeSpec turns empty lists into nil, so that a state and its restored snapshot are equal.
func normalizeSpec(s *JobSpec) {
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Hostfile) == 0 {
		s.Hostfile = nil
	}
	if len(s.PEs) == 0 {
		s.PEs = nil
	}
	if len(s.Depend) == 0 {
		s.Depend = nil
	}
	for i := range s.Depend {
		if len(s.Depend[i].IDs) == 0 {
			s.Depend[i].IDs = nil
		}
	}
	if !s.Begin.IsZero() {
		s.Begin = s.Begin.UTC()
	}
}

// job returns the job with the given ID.
func (s *State) job(id uint64) (*Job, error) {
	j, ok := s.Jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrNoSuchJob, id)
	}
	return j, nil
}

// current returns the job and its attempt n, which must be the job's current attempt. The fence:
// commands for any other attempt change nothing.
//
// The Result is what the handler answers: the job and its attempt, or on
// an error the job ID asked about.
func (s *State) current(id uint64, n int) (*Job, *Attempt, Result, error) {
	j, err := s.job(id)
	if err != nil {
		return nil, nil, Result{JobID: id}, err
	}
	a := j.Current()
	if n != j.Attempt || a == nil {
		return nil, nil, Result{JobID: id}, fmt.Errorf("%w: job %d attempt %d, current attempt is %d", ErrStaleAttempt, id, n, j.Attempt)
	}
	return j, a, Result{JobID: j.ID, Attempt: j.Attempt}, nil
}

func errEnded(j *Job, a *Attempt) error {
	return fmt.Errorf("%w: job %d attempt %d already ended (%s)", ErrStaleAttempt, j.ID, a.N, a.State)
}

func (s *State) place(at time.Time, b *PlaceJob) (Result, error) {
	j, err := s.job(b.ID)
	if err != nil {
		return Result{}, err
	}
	res := Result{JobID: j.ID, Attempt: j.Attempt}
	if j.State.Terminal() {
		return res, fmt.Errorf("%w: job %d is %s", ErrJobTerminal, j.ID, j.State)
	}
	head := b.Head
	if head == "" && len(b.Hosts) > 0 {
		head = b.Hosts[0].Node
	}
	if a := j.Current(); a != nil && b.Attempt == j.Attempt && !a.Ended() {
		if slices.Equal(a.Hosts, b.Hosts) && a.Head == head && a.Degraded == b.Degraded && a.DegradedReason == b.DegradedReason {
			res.Noop = true
			return res, nil
		}
		return res, fmt.Errorf("%w: job %d attempt %d is already placed elsewhere", ErrStaleAttempt, j.ID, b.Attempt)
	}
	if b.Attempt != j.Attempt+1 || j.State != StateQueued {
		return res, fmt.Errorf("%w: job %d is %s at attempt %d; place attempt %d refused", ErrStaleAttempt, j.ID, j.State, j.Attempt, b.Attempt)
	}
	if j.failures()+1 > j.Spec.MaxAttempts {
		return res, fmt.Errorf("%w: attempt %d exceeds max_attempts %d", ErrInvalid, b.Attempt, j.Spec.MaxAttempts)
	}
	if err := validateHosts(b.Hosts, &j.Spec); err != nil {
		return res, err
	}
	if !slices.ContainsFunc(b.Hosts, func(h Host) bool { return h.Node == head }) {
		return res, fmt.Errorf("%w: head %q is not one of the hosts", ErrInvalid, head)
	}
	if err := checkLen("degraded_reason", b.DegradedReason); err != nil {
		return res, err
	}
	if err := checkLen("reason", b.Reason); err != nil {
		return res, err
	}
	n := j.clone()
	if e := n.Elastic; e != nil {
		np := 0
		for _, h := range b.Hosts {
			np += h.NP
		}
		prev := e.TargetNP
		if last := j.Current(); last != nil {
			prev = last.NP()
		}
		if np != e.TargetNP && np != prev {
			reason := b.Reason
			if reason == "" {
				reason = fmt.Sprintf("placed on %d processes, target %d", np, e.TargetNP)
			}
			e.History = appendCapped(e.History, Resize{At: at, Attempt: b.Attempt, FromNP: prev, ToNP: np, Reason: reason}, MaxHistory)
		}
	}
	n.Attempts = append(n.Attempts, Attempt{
		N: b.Attempt, Hosts: cloneSlice(b.Hosts), Head: head,
		Degraded: b.Degraded, DegradedReason: b.DegradedReason,
		State: StateLaunching, PlacedAt: at,
	})
	n.Attempt = b.Attempt
	n.State = StateLaunching
	n.Reason = ""
	n.WaitReason, n.WaitSince = "", time.Time{}
	s.setJob(n)
	return Result{JobID: n.ID, Attempt: n.Attempt}, nil
}

// recordPlacedIndex keeps in the attempt place_job created the raft index
// of that entry. Raft commits one entry per index and never goes back (a
// snapshot restore moves the index on), so the index names this attempt
// and no later one that a restore gives the same job ID and number: job
// capabilities are bound to it (with the owner and the placement time,
// which differ when a cluster is rebuilt and its index starts again).
func (s *State) recordPlacedIndex(res Result, index uint64) {
	if res.Err != nil || res.Noop || index == 0 {
		return
	}
	if j := s.Jobs[res.JobID]; j != nil {
		if a := j.Current(); a != nil && a.N == res.Attempt {
			a.PlacedIndex = index
		}
	}
}

// recordFailedIndex keeps in the attempt fail_attempt ended the raft index
// of that entry: a node whose applied state has reached it knows the
// attempt is over and ends its processes (leader: a retry waits for the
// lost nodes to know, or for their leases to lapse).
func (s *State) recordFailedIndex(res Result, index uint64) {
	if res.Err != nil || res.Noop || index == 0 {
		return
	}
	if j := s.Jobs[res.JobID]; j != nil {
		if a := j.Current(); a != nil && a.N == res.Attempt {
			a.FailedIndex = index
		}
	}
}

func (s *State) ack(_ time.Time, b *AckReservation) (Result, error) {
	if err := nonEmpty("node", b.Node); err != nil {
		return Result{}, err
	}
	j, a, res, err := s.current(b.ID, b.Attempt)
	if err != nil {
		return res, err
	}
	if a.Ended() {
		return res, errEnded(j, a)
	}
	if !a.Holds(b.Node) {
		return res, fmt.Errorf("%w: node %q, job %d attempt %d", ErrNotAllocated, b.Node, j.ID, a.N)
	}
	if a.Acked(b.Node) {
		res.Noop = true
		return res, nil
	}
	if err := s.checkGPUs(j, a, b.Node, b.GPUs); err != nil {
		return res, err
	}
	n := j.clone()
	cur := n.Current()
	i, _ := slices.BinarySearch(cur.Acks, b.Node)
	cur.Acks = slices.Insert(cur.Acks, i, b.Node)
	setGPUs(cur, b.Node, b.GPUs)
	s.setJob(n)
	return res, nil
}

func (s *State) start(at time.Time, b *StartJob) (Result, error) {
	j, a, res, err := s.current(b.ID, b.Attempt)
	if err != nil {
		return res, err
	}
	if a.Ended() {
		return res, errEnded(j, a)
	}
	if j.State == StateRunning {
		res.Noop = true
		return res, nil
	}
	if j.State != StateLaunching {
		return res, fmt.Errorf("%w: job %d is %s", ErrWrongState, j.ID, j.State)
	}
	if p := a.Pending(); len(p) > 0 {
		return res, fmt.Errorf("%w: job %d attempt %d waits for %v", ErrNotAcked, j.ID, a.N, p)
	}
	n := j.clone()
	cur := n.Current()
	cur.State, cur.StartedAt = StateRunning, at
	n.State, n.StartedAt = StateRunning, at
	s.setJob(n)
	return res, nil
}

func (s *State) finish(at time.Time, b *FinishAttempt) (Result, error) {
	if b.ExitCode == nil {
		return Result{JobID: b.ID}, fmt.Errorf("%w: exit_code is missing", ErrInvalid)
	}
	code := *b.ExitCode
	j, a, res, err := s.current(b.ID, b.Attempt)
	if err != nil {
		return res, err
	}
	if a.Ended() {
		if a.ExitCode != nil && *a.ExitCode == code {
			res.Noop = true
			return res, nil
		}
		return res, errEnded(j, a)
	}
	// A launcher only starts after the barrier, so an exit before start_job still needs every ack.
	if p := a.Pending(); len(p) > 0 {
		return res, fmt.Errorf("%w: job %d attempt %d exited but %v never reserved", ErrNotAcked, j.ID, a.N, p)
	}
	if code == ExitCheckpointed && j.Elastic != nil && (a.Progress != nil || j.Elastic.ResizeAttempt == a.N) {
		s.setJob(checkpointedCopy(j, at))
		return res, nil
	}
	st, reason := StateDone, ""
	if code != 0 {
		st, reason = StateFailed, fmt.Sprintf("exit code %d", code)
		if oom := attemptOOM(a); oom != "" {
			reason = oom // the kernel killed a process of the attempt for its memory (usage.go)
		}
		if code == ExitCheckpointed && j.Elastic != nil {
			// A program that checkpoints before reporting any progress and unasked would be
			// relaunched for ever; it fails like a lost attempt, while attempts remain.
			s.setJob(failedCopy(j, at, "exit 75 (checkpointed) without reporting progress or being asked to resize", true))
			return res, nil
		}
	}
	n := j.clone()
	cur := n.Current()
	cur.State, cur.Reason, cur.EndedAt, cur.ExitCode = st, reason, at, clonePtr(&code)
	n.State, n.Reason, n.EndedAt, n.ExitCode = st, reason, at, clonePtr(&code)
	s.setJob(n)
	return res, nil
}

func (s *State) fail(at time.Time, b *FailAttempt) (Result, error) {
	if err := nonEmpty("reason", b.Reason); err != nil {
		return Result{JobID: b.ID}, err
	}
	j, a, res, err := s.current(b.ID, b.Attempt)
	if err != nil {
		return res, err
	}
	if a.Ended() {
		if a.State == StateFailed && a.ExitCode == nil && a.Reason == b.Reason {
			res.Noop = true
			return res, nil
		}
		return res, errEnded(j, a)
	}
	reason, retry := b.Reason, b.Retry
	if oom := attemptOOM(a); oom != "" {
		// Not a node failure: the job needs more memory than it asked for (usage.go).
		reason, retry = oom, false
	}
	n := failedCopy(j, at, reason, retry)
	if len(b.Lost) > 0 {
		n.Attempts[len(n.Attempts)-1].Lost = slices.Sorted(slices.Values(b.Lost))
	}
	s.setJob(n)
	return res, nil
}

// failedCopy returns a copy of live job j whose current attempt failed for reason: requeued while
// retry is allowed and attempts remain, failed otherwise.
func failedCopy(j *Job, at time.Time, reason string, retry bool) *Job {
	n := j.clone()
	cur := n.Current()
	cur.State, cur.Reason, cur.EndedAt = StateFailed, reason, at
	if retry && n.failures() < n.Spec.MaxAttempts {
		n.State = StateQueued
		n.Reason = fmt.Sprintf("attempt %d failed: %s; requeued", cur.N, reason)
		n.StartedAt = time.Time{}
		return n
	}
	n.State, n.EndedAt = StateFailed, at
	n.Reason = reason
	if retry {
		// Attempt numbers run past max_attempts when checkpointed (elastic) attempts came
		// before, since those do not count: say both figures so "attempt 4" reads right.
		n.Reason = fmt.Sprintf("%s (attempt %d; %d failed attempts of max_attempts %d)", reason, cur.N, n.failures(), n.Spec.MaxAttempts)
	}
	return n
}

func (s *State) reject(at time.Time, b *RejectJob) (Result, error) {
	if err := nonEmpty("reason", b.Reason); err != nil {
		return Result{JobID: b.ID}, err
	}
	j, err := s.job(b.ID)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: j.ID, Attempt: j.Attempt}
	if j.State == StateFailed && j.Reason == b.Reason {
		res.Noop = true
		return res, nil
	}
	if j.State.Terminal() {
		return res, fmt.Errorf("%w: job %d is %s", ErrJobTerminal, j.ID, j.State)
	}
	if j.State != StateQueued {
		return res, fmt.Errorf("%w: job %d is %s, only a queued job can be rejected", ErrWrongState, j.ID, j.State)
	}
	n := j.clone()
	n.State, n.Reason, n.EndedAt = StateFailed, b.Reason, at
	n.WaitReason, n.WaitSince = "", time.Time{}
	s.setJob(n)
	return res, nil
}

func (s *State) kill(at time.Time, b *KillJob) (Result, error) {
	if err := nonEmpty("user", b.User); err != nil {
		return Result{JobID: b.ID}, err
	}
	if b.Array {
		return s.killArray(at, b)
	}
	j, err := s.job(b.ID)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: j.ID, Attempt: j.Attempt}
	if b.User != j.Owner && b.User != RootUser {
		return res, fmt.Errorf("%w: job %d belongs to %q, not %q", ErrNotOwner, j.ID, j.Owner, b.User)
	}
	if j.State == StateKilled {
		res.Noop = true
		return res, nil
	}
	if j.State.Terminal() {
		return res, fmt.Errorf("%w: job %d is %s", ErrJobTerminal, j.ID, j.State)
	}
	s.setJob(killedCopy(j, at, b.User))
	return res, nil
}

// killArray kills every unfinished task of the array b.ID names; the tasks that ended already
// are left as they are, and an array with none left to kill is a no-op.
func (s *State) killArray(at time.Time, b *KillJob) (Result, error) {
	jobs, err := s.targets(b.ID, true)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: b.ID}
	for _, j := range jobs {
		if b.User != j.Owner && b.User != RootUser {
			return res, fmt.Errorf("%w: job %d belongs to %q, not %q", ErrNotOwner, j.ID, j.Owner, b.User)
		}
	}
	for _, j := range jobs {
		if !j.State.Terminal() {
			s.setJob(killedCopy(j, at, b.User))
			res.JobIDs = append(res.JobIDs, j.ID)
		}
	}
	res.Noop = len(res.JobIDs) == 0
	return res, nil
}

// killedCopy returns a copy of unfinished job j killed by user.
func killedCopy(j *Job, at time.Time, user string) *Job {
	reason := "killed by " + user
	n := j.clone()
	if cur := n.Current(); cur != nil && !cur.Ended() {
		cur.State, cur.Reason, cur.EndedAt = StateKilled, reason, at
	}
	n.State, n.Reason, n.EndedAt = StateKilled, reason, at
	n.WaitReason, n.WaitSince = "", time.Time{}
	return n
}

func (s *State) setWaitReason(at time.Time, b *SetWaitReason) (Result, error) {
	if err := checkLen("reason", b.Reason); err != nil {
		return Result{JobID: b.ID}, err
	}
	j, err := s.job(b.ID)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: j.ID, Attempt: j.Attempt}
	if j.WaitReason == b.Reason {
		res.Noop = true
		return res, nil
	}
	if j.State.Terminal() {
		return res, fmt.Errorf("%w: job %d is %s", ErrJobTerminal, j.ID, j.State)
	}
	if j.State != StateQueued {
		return res, fmt.Errorf("%w: job %d is %s, only a queued job waits", ErrWrongState, j.ID, j.State)
	}
	n := j.clone()
	n.WaitReason, n.WaitSince = b.Reason, at
	if b.Reason == "" {
		n.WaitSince = time.Time{}
	}
	s.setJob(n)
	return res, nil
}

// submitted returns a job that request b already created, or nil. An
// array's tasks carry request IDs of their own (arrayRequestID), and job GC
// may have purged some of them, the first included: a retried submit must
// still find any task that is left, or it would create the array twice.
func (s *State) submitted(b *SubmitJob) *Job {
	if j := s.JobByRequest(b.RequestID); j != nil {
		return j
	}
	if b.Spec.Array == nil {
		return nil
	}
	for _, t := range b.Spec.Array.Tasks {
		if j := s.JobByRequest(arrayRequestID(b.RequestID, t)); j != nil {
			return j
		}
	}
	return nil
}
