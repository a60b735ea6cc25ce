package leader

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// launching is a world whose job 1 (two processes) is placed on n1 and n2
// at t0 and acknowledged by acks.
func launching(t *testing.T, acks ...string) *world {
	w := newWorld(t, "n1", "n2", "n3")
	submit(w, "j", raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none"})
	placeAndAck(w, 1, []string{"n1", "n2"}, acks...)
	return w
}

func TestSchedule_LaunchingAndRunningAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		acks    []string
		start   bool // the attempt started (every node acked, start_job applied)
		n2      nodestate.Status
		forget  bool // gossip does not know n2
		after   time.Duration
		want    []string
		wantNot []string
	}{
		{name: "all acked: start", acks: []string{"n1", "n2"}, want: []string{`start_job {"id":1,"attempt":1}`}},
		{name: "one pending, in time: nothing", acks: []string{"n1"}, after: 10 * time.Second},
		{name: "one pending past the timeout: fail with retry", acks: []string{"n1"}, after: 10*time.Second + time.Millisecond,
			want: []string{`fail_attempt {"id":1,"attempt":1,"reason":"co-allocation timed out after 10s: [n2] did not reserve","retry":true}`}},
		{name: "dead host while launching: fail, lost", acks: []string{"n1"}, n2: nodestate.StatusDead,
			want: []string{`fail_attempt {"id":1,"attempt":1,"reason":"node n2 died under attempt 1","retry":true,"lost":["n2"]}`}},
		{name: "dead host under a running attempt", acks: []string{"n1", "n2"}, start: true, n2: nodestate.StatusDead,
			want: []string{`"reason":"node n2 died under attempt 1","retry":true,"lost":["n2"]`}},
		{name: "left host", acks: []string{"n1", "n2"}, start: true, n2: nodestate.StatusLeft, want: []string{`"lost":["n2"]`}},
		{name: "host unknown to gossip", acks: []string{"n1", "n2"}, start: true, forget: true, want: []string{`"lost":["n2"]`}},
		{name: "suspect is not dead", acks: []string{"n1", "n2"}, n2: nodestate.Status("suspect"), want: []string{`start_job`}, wantNot: []string{"fail_attempt"}},
		{name: "running and healthy: nothing", acks: []string{"n1", "n2"}, start: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := launching(t, tc.acks...)
			if tc.start {
				w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
			}
			if tc.n2 != "" {
				w.node("n2").Status = tc.n2
			}
			if tc.forget {
				w.nodes = slices.DeleteFunc(w.nodes, func(n Node) bool { return n.Name == "n2" })
			}
			w.now = w.now.Add(tc.after)
			cmds, _ := Schedule(w.view(), JobsBook{})
			wantCommands(t, cmds, tc.want)
			for _, no := range tc.wantNot {
				if contains(commands(cmds), no) {
					t.Errorf("commands %q, want no %s", commands(cmds), no)
				}
			}
			for _, c := range cmds {
				if c.Placement {
					t.Errorf("%s is marked as a placement", c.Type)
				}
			}
		})
	}
}

func TestSchedule_Placement(t *testing.T) {
	t.Parallel()
	loaded := func(w *world) {
		for i := range w.nodes {
			w.nodes[i].Attrs.Load = nodestate.Means{Now: 40, M1: 40, M5: 40, M15: 40}
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(w *world)
		want  []string
	}{
		{name: "two jobs never share free slots", setup: func(w *world) {
			submit(w, "a", raftfsm.JobSpec{NP: 8, MPI: "none"})
			submit(w, "b", raftfsm.JobSpec{NP: 8, MPI: "none"})
		}, want: []string{`place_job {"id":1,"attempt":1,"hosts":[`, `set_wait_reason {"id":2,"reason":"not enough free slots: need 8, the 3 usable nodes have 4`}},
		{name: "overloaded: the wait reason says so", setup: func(w *world) {
			loaded(w)
			submit(w, "a", raftfsm.JobSpec{NP: 2, MPI: "none"})
		}, want: []string{`set_wait_reason {"id":1,"reason":"cluster overloaded:`}},
		{name: "same wait reason: not written again", setup: func(w *world) {
			loaded(w)
			submit(w, "a", raftfsm.JobSpec{NP: 2, MPI: "none"})
			cmds, _ := Schedule(w.view(), JobsBook{})
			w.apply(cmds[0].Type, cmds[0].Body)
		}},
		{name: "immediate job with no room: rejected", setup: func(w *world) {
			loaded(w)
			submit(w, "a", raftfsm.JobSpec{NP: 2, MPI: "none", Immediate: true})
		}, want: []string{`reject_job {"id":1,"reason":"immediate job cannot start now: cluster overloaded:`}},
		{name: "forced job on a loaded cluster: placed", setup: func(w *world) {
			loaded(w)
			submit(w, "a", raftfsm.JobSpec{NP: 2, MPI: "none", Force: true, Oversubscribe: true})
		}, want: []string{`place_job {"id":1,"attempt":1,`}},
		{name: "unplaceable: rejected with placement's error", setup: func(w *world) {
			submit(w, "a", raftfsm.JobSpec{NP: 1, MPI: "none", Hostfile: []raftfsm.HostSlots{{Host: "elsewhere", Slots: 1}}})
		}, want: []string{`reject_job {"id":1,"reason":"cannot place: `}},
		{name: "requeued job avoids the node it lost", setup: func(w *world) {
			submit(w, "a", raftfsm.JobSpec{NP: 8, PPN: 4, MPI: "none"})
			w.apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: 1, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", NP: 4}, {Node: "n2", NP: 4}}})
			w.apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: 1, Attempt: 1, Node: "n1"})
			w.apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: 1, Attempt: 1, Node: "n2"})
			w.apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
			w.apply(raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: 1, Attempt: 1, Reason: "lost", Retry: true, Lost: []string{"n2"}})
		}, want: []string{`place_job {"id":1,"attempt":2,"hosts":[{"node":"n1","procs":4},{"node":"n3","procs":4}]}`}},
		{name: "requeued job avoids the node that never reserved", setup: func(w *world) {
			submit(w, "a", raftfsm.JobSpec{NP: 8, PPN: 4, MPI: "none"})
			w.apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: 1, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", NP: 4}, {Node: "n3", NP: 4}}})
			w.apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: 1, Attempt: 1, Node: "n3"})
			w.apply(raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: 1, Attempt: 1, Reason: "timeout", Retry: true})
		}, want: []string{`place_job {"id":1,"attempt":2,"hosts":[{"node":"n2","procs":4},{"node":"n3","procs":4}]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "n1", "n2", "n3")
			tc.setup(w)
			cmds, _ := Schedule(w.view(), JobsBook{})
			wantCommands(t, cmds, tc.want)
			for i := range cmds {
				if !cmds[i].Placement {
					t.Errorf("%s not marked as a placement: the agent would go on after a refusal", cmds[i].Type)
				}
			}
		})
	}
}

// A placement raft refused for its content is rejected by the next round,
// once; any other refusal is simply retried.
func TestSchedule_RefusedPlacementIsRejectedNextRound(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2")
	submit(w, "a", raftfsm.JobSpec{NP: 1, MPI: "none"})
	submit(w, "b", raftfsm.JobSpec{NP: 1, MPI: "none"})
	invalid := raftfsm.Code(raftfsm.ErrInvalid)

	b := JobsBook{}.PlacementRefused(1, 1, "stale", "the job changed")
	if len(b.Refused) != 0 {
		t.Fatalf("a refusal of the moment was kept: %v", b.Refused)
	}
	b = b.PlacementRefused(1, 1, invalid, "hosts[0] bad")
	cmds, next := Schedule(w.view(), b)
	got := commands(cmds)
	if len(got) != 2 || got[0] != `reject_job {"id":1,"reason":"cannot place: the allocation was refused: hosts[0] bad"}` ||
		!strings.HasPrefix(got[1], `place_job {"id":2,`) {
		t.Fatalf("commands %q, want job 1 rejected and job 2 placed", got)
	}
	if len(next.Refused) != 0 || len(b.Refused) != 1 {
		t.Fatalf("book after the round %v (before %v), want the refusal consumed and the input untouched", next.Refused, b.Refused)
	}
	// A refusal of an earlier attempt, or of a job no longer queued, is forgotten.
	stale := JobsBook{}.PlacementRefused(1, 7, invalid, "old")
	if cmds, next := Schedule(w.view(), stale); contains(commands(cmds), "reject_job") || len(next.Refused) != 0 {
		t.Fatalf("stale refusal acted on: %q, book %v", commands(cmds), next.Refused)
	}
}

func TestSchedule_PlacementCanceled(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2")
	submit(w, "a", raftfsm.JobSpec{NP: 1, MPI: "none"})
	done := make(chan struct{})
	close(done)
	v := w.view()
	v.Done = done
	if cmds, _ := Schedule(v, JobsBook{}); len(cmds) != 0 {
		t.Fatalf("canceled round proposed %q", commands(cmds))
	}
}
