package jobrun

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// An exec request that overtakes start_job goes on when start_job is
// applied here, not at a timer's next tick: the recheck timer never fires
// in this test, so only the applied entry can end the wait.
func TestWaitRunnableWakesOnTheAppliedStart(t *testing.T) {
	t.Parallel()
	f := raftfsm.New()
	apply := applier(t, f)
	n := testNode(t, f, func() {})
	// The timer never fires; it tells the test that the wait checked the
	// state and is about to wait again.
	waiting := make(chan struct{}, 8)
	n.after = func(time.Duration) <-chan time.Time {
		waiting <- struct{}{}
		return nil
	}
	checked := func(why string) {
		t.Helper()
		select {
		case <-waiting:
		case <-time.After(30 * time.Second):
			t.Fatalf("the wait did not check the state again %s", why)
		}
	}
	close(n.life.settled)
	id := apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: "r", Owner: "alice",
		Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}}).JobID
	apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}})
	apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: "n0"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type answer struct {
		j   *raftfsm.Job
		err error
	}
	got := make(chan answer, 1)
	go func() {
		j, err := n.WaitRunnable(ctx, Key{Job: id, Attempt: 1})
		got <- answer{j, err}
	}()
	checked("at first")
	// An entry that does not start the job wakes the wait without ending it.
	apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: "other", Owner: "alice",
		Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}})
	checked("after an entry was applied")
	select {
	case a := <-got:
		t.Fatalf("the wait ended before the job started: %+v", a)
	default:
	}
	apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1})
	a := <-got
	if a.err != nil {
		t.Fatalf("the wait ended with %v, not the running job (it did not wake on the applied start_job)", a.err)
	}
	if a.j.ID != id || a.j.State != raftfsm.StateRunning {
		t.Errorf("the wait returned job %d in state %s, want job %d running", a.j.ID, a.j.State, id)
	}
}
