package jobrun

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/fence"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// fencedNode is a testNode with fencing on (lease lease) over an FSM in
// which job 1 runs attempt 1 on it; renewals answer renewErr, or the
// leader's index renewIndex, and the commands it proposes are kept in
// proposed (apply commits one to the FSM).
type fencedNode struct {
	*Node
	apply      func(typ string, body any)
	mu         sync.Mutex
	renewErr   error
	renewIndex uint64
	proposed   []string
}

// testLease is the lease of the tests that wait for it to lapse: long
// enough that a renewal and the check after it fall within it on a
// starved machine (a race build beside two busy loops once took over
// 300 ms between them), short enough that waiting out its lapse is cheap.
const testLease = 2 * time.Second

func newFencedNode(t *testing.T, lease time.Duration) *fencedNode {
	t.Helper()
	f := raftfsm.New()
	var index uint64
	apply := func(typ string, body any) {
		b, err := raftfsm.Encode(typ, time.Now(), body)
		if err != nil {
			t.Fatal(err)
		}
		index++
		if res := f.Apply(&raft.Log{Index: index, Data: b}).(raftfsm.Result); res.Err != nil {
			t.Fatalf("%s: %v", typ, res.Err)
		}
	}
	apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: "a", Owner: "alice", Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}})
	apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: 1, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}})
	apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: 1, Attempt: 1, Node: "n0"})
	apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
	fn := &fencedNode{Node: testNode(t, f, func() {}), apply: apply}
	fn.cfg.Lease = lease
	fn.d.RenewLease = func(context.Context) (uint64, error) {
		fn.mu.Lock()
		defer fn.mu.Unlock()
		return fn.renewIndex, fn.renewErr
	}
	fn.d.Propose = func(_ context.Context, b []byte) (api.ApplyResult, error) {
		c, err := raftfsm.Decode(b)
		if err != nil {
			t.Error(err)
		}
		fn.mu.Lock()
		defer fn.mu.Unlock()
		fn.proposed = append(fn.proposed, c.Type+" "+string(c.Body))
		return api.ApplyResult{}, nil
	}
	return fn
}

// startSleep runs a process of attempt k in the node's table, in a group of its own.
func (fn *fencedNode) startSleep(t *testing.T, k Key) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	fn.procs.add(k, cmd)
	fn.leaseCovers(k)
	return cmd
}

// A node starts nothing before its first renewal; renewals within the
// lease keep its attempts, and hand the guard their process groups; a
// renewal after the lease lapsed from a leader that gives no index fails
// the attempt with retry and kills its processes before the lease is
// extended.
func TestLeaseLapseFailsAndKillsTheNodesAttempts(t *testing.T) {
	t.Parallel()
	fn := newFencedNode(t, testLease)
	ctx := context.Background()
	if err := fn.requireLease(); !errors.Is(err, ErrNoLease) {
		t.Fatalf("before any renewal: %v, want ErrNoLease", err)
	}
	fn.mu.Lock()
	fn.renewErr = errors.New("no leader")
	fn.mu.Unlock()
	if err := fn.renewLease(ctx); err == nil || fn.requireLease() == nil {
		t.Fatal("a refused renewal gave a lease")
	}
	fn.mu.Lock()
	fn.renewErr = nil
	fn.mu.Unlock()
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fn.requireLease(); err != nil {
		t.Fatalf("after a renewal: %v", err)
	}
	k := Key{Job: 1, Attempt: 1}
	cmd := fn.startSleep(t, k)
	l, ok, err := fence.Read(fn.fenceDir())
	if err != nil || !ok || len(l.Pgids) != 1 || l.Pgids[0] != cmd.Process.Pid || l.Until <= fence.Now() {
		t.Fatalf("the guard's lease %+v (%v, %v): want pgid %d, a deadline ahead", l, ok, err, cmd.Process.Pid)
	}
	// Renewed within the lease: nothing ends.
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	if len(fn.proposed) != 0 || syscall.Kill(cmd.Process.Pid, 0) != nil {
		t.Fatalf("a renewal within the lease ended the attempt: proposed %q", fn.proposed)
	}
	// The lease lapses (the agent stalled); the next renewal ends the attempt first.
	fn.lapse(t)
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	fn.wantFailedAndKilled(t, cmd, true)
}

// lapse waits until the node's lease has lapsed.
func (fn *fencedNode) lapse(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for fn.requireLease() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the lease never lapsed")
		}
		time.Sleep(10 * time.Millisecond) // polling the lease's lapse
	}
}

// wantFailedAndKilled checks that attempt 1 was failed with retry (or,
// unless failed, that nothing was proposed), that cmd was killed and that
// the node holds a new lease.
func (fn *fencedNode) wantFailedAndKilled(t *testing.T, cmd *exec.Cmd, failed bool) {
	t.Helper()
	fn.mu.Lock()
	proposed := strings.Join(fn.proposed, "\n")
	fn.mu.Unlock()
	if failed && (!strings.Contains(proposed, `fail_attempt {"id":1,"attempt":1,"reason":"node n0 lost its lease with the leader under attempt 1`) ||
		!strings.Contains(proposed, `"retry":true`)) {
		t.Fatalf("proposed %q, want attempt 1 failed with retry", proposed)
	}
	if !failed && proposed != "" {
		t.Fatalf("proposed %q for an attempt the state has ended, want nothing", proposed)
	}
	deadline := time.Now().Add(time.Minute)
	for syscall.Kill(cmd.Process.Pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the attempt's process outlived the lapsed lease")
		}
		time.Sleep(10 * time.Millisecond) // polling the kill
	}
	if err := fn.requireLease(); err != nil {
		t.Fatalf("after the lapse was handled: %v, want a new lease", err)
	}
}

// A renewal after a lapse, answered by a leader that had applied index 4
// (this node's state too): attempt 1 is live, current and here in that
// state, so it goes on; nothing is proposed and its process lives. Once
// the state has it failed, the next lapse kills it, proposing nothing.
func TestLeaseLapseKeepsAttemptsTheLeaderKept(t *testing.T) {
	t.Parallel()
	fn := newFencedNode(t, testLease)
	ctx := context.Background()
	fn.renewIndex = fn.d.State.Index()
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	k := Key{Job: 1, Attempt: 1}
	cmd := fn.startSleep(t, k)
	fn.lapse(t)
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	fn.mu.Lock()
	proposed := slices.Clone(fn.proposed)
	fn.mu.Unlock()
	if len(proposed) != 0 || syscall.Kill(cmd.Process.Pid, 0) != nil || fn.requireLease() != nil {
		t.Fatalf("after a lapse the leader's state did not end: proposed %q, process alive %v, lease %v; want the attempt kept under a new lease",
			proposed, syscall.Kill(cmd.Process.Pid, 0) == nil, fn.requireLease())
	}
	// The leader failed attempt 1 (this node was lost meanwhile); a lapse
	// after that ends it.
	fn.apply(raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: 1, Attempt: 1, Reason: "lost n0"})
	fn.mu.Lock()
	fn.renewIndex = fn.d.State.Index()
	fn.mu.Unlock()
	fn.lapse(t)
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	fn.wantFailedAndKilled(t, cmd, false)
}

// A renewal after a lapse answered at an index this node's state does not
// reach within half a lease: it cannot tell what the leader did, so it fails
// and kills the attempt.
func TestLeaseLapseBehindTheLeaderEndsAttempts(t *testing.T) {
	t.Parallel()
	fn := newFencedNode(t, testLease)
	ctx := context.Background()
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	cmd := fn.startSleep(t, Key{Job: 1, Attempt: 1})
	fn.lapse(t)
	fn.mu.Lock()
	fn.renewIndex = fn.d.State.Index() + 1
	fn.mu.Unlock()
	if err := fn.renewLease(ctx); err != nil {
		t.Fatal(err)
	}
	fn.wantFailedAndKilled(t, cmd, true)
}

// A reservation is acknowledged only after a renewal sent once the
// placement was seen: one renewal answers every reservation seen before
// it was sent, a renewal sent earlier answers none of the later ones, and
// a refused renewal answers nothing.
func TestReservationsSeenTogetherShareOneRenewal(t *testing.T) {
	t.Parallel()
	fn := newFencedNode(t, time.Minute)
	ctx := context.Background()
	var calls atomic.Int32
	gate := make(chan struct{})
	renew := fn.d.RenewLease
	fn.d.RenewLease = func(ctx context.Context) (uint64, error) {
		calls.Add(1)
		<-gate
		return renew(ctx)
	}
	seen := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- fn.renewLeaseSince(ctx, seen)
		}()
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("20 reservations seen together made %d renewals, want 1", n)
	}
	if err := fn.renewLeaseSince(ctx, seen); err != nil || calls.Load() != 1 {
		t.Fatalf("a reservation answered by the last renewal renewed again (%d renewals, %v)", calls.Load(), err)
	}
	later := time.Now()
	if err := fn.renewLeaseSince(ctx, later); err != nil || calls.Load() != 2 {
		t.Fatalf("a reservation seen after the last renewal was sent: %d renewals, want 2 (%v)", calls.Load(), err)
	}
	fn.mu.Lock()
	fn.renewErr = errors.New("no leader")
	fn.mu.Unlock()
	refused := time.Now()
	if err := fn.renewLeaseSince(ctx, refused); err == nil {
		t.Fatal("a refused renewal answered a reservation")
	}
	fn.mu.Lock()
	fn.renewErr = nil
	fn.mu.Unlock()
	if err := fn.renewLeaseSince(ctx, refused); err != nil || calls.Load() != 4 {
		t.Fatalf("after a refused renewal: %d renewals, want 4 (%v)", calls.Load(), err)
	}
}

// TestLaunchWithoutALeaseIsNotTheJobsFault: a head whose lease lapsed
// after it waited for one and before the attempt's processes started
// starts nothing, and says the failure is the lease's, so that the
// attempt is retried instead of blamed on the job.
func TestLaunchWithoutALeaseIsNotTheJobsFault(t *testing.T) {
	t.Parallel()
	fn := newFencedNode(t, time.Minute) // never renewed: no lease
	fn.d.MayRunAs = func(string) error { return nil }
	fn.apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: "b", Owner: "root", Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: "/"}})
	fn.apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: 2, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}})
	fn.apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: 2, Attempt: 1, Node: "n0"})
	fn.apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 2, Attempt: 1})
	var j *raftfsm.Job
	fn.d.State.View(func(s *raftfsm.State) { j = s.Jobs[2].Clone() })
	k := Key{Job: 2, Attempt: 1}
	code, reason, noLease := fn.launch(context.Background(), j, &j.Attempts[0], k)
	if !noLease || code == 0 || !strings.Contains(reason, ErrNoLease.Error()) {
		t.Fatalf("launch without a lease: code %d, reason %q, not the job's fault %v; want a failure that is the lease's", code, reason, noLease)
	}
	if got := fn.procs.pids(k); len(got) != 0 {
		t.Fatalf("processes started without a lease: %v", got)
	}
}
