package events

import (
	"fmt"
	"slices"
	"testing"
)

func all(Event) bool { return true }

func keys(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%d:%s", e.Index, e.Key))
	}
	return out
}

func ev(index uint64, topic, key string) Event {
	return Event{Index: index, Topic: topic, Type: "t", Key: key}
}

func TestRingAfterAndNext(t *testing.T) {
	t.Parallel()
	r := NewRing(8)
	r.Start(4)
	r.Publish(ev(5, TopicJob, "a"), ev(5, TopicAttempt, "a/1"), ev(6, TopicJob, "b"), ev(6, TopicNode, "n1"))
	evs, cur, ok := after(r, 5, all)
	if !ok || !slices.Equal(keys(evs), []string{"6:b", "6:n1"}) {
		t.Fatalf("After(5) = %v %v", keys(evs), ok)
	}
	// The node event at 6 comes again to a stream resumed from 6; the job's does not.
	if evs, _, _ := after(r, 6, all); !slices.Equal(keys(evs), []string{"6:n1"}) {
		t.Fatalf("After(6) = %v", keys(evs))
	}
	ch := r.Changed()
	r.Publish(ev(7, TopicJob, "c"))
	<-ch
	evs, _, ok = r.Next(cur, all)
	if !ok || !slices.Equal(keys(evs), []string{"7:c"}) {
		t.Fatalf("Next = %v %v", keys(evs), ok)
	}
	jobsOnly := func(e Event) bool { return e.Topic == TopicJob }
	if evs, _, _ := after(r, 4, jobsOnly); !slices.Equal(keys(evs), []string{"5:a", "6:b", "7:c"}) {
		t.Fatalf("After(4, jobs) = %v", keys(evs))
	}
}

func TestRingResetWhenTooOld(t *testing.T) {
	t.Parallel()
	r := NewRing(3)
	r.Start(0)
	for i := uint64(1); i <= 5; i++ {
		r.Publish(ev(i, TopicJob, fmt.Sprint(i)))
	}
	// Events 1 and 2 are gone: a stream from 1 lost 2, one from 2 lost nothing.
	if _, _, ok := after(r, 1, all); ok {
		t.Fatal("After(1) claimed to hold every event above 1")
	}
	if evs, _, ok := after(r, 2, all); !ok || !slices.Equal(keys(evs), []string{"3:3", "4:4", "5:5"}) {
		t.Fatalf("After(2) = %v %v", keys(evs), ok)
	}
	// An index from the future (another agent's, an earlier run's) resets too.
	if _, _, ok := after(r, 9, all); ok {
		t.Fatal("After(9) accepted an index above the ring's")
	}
	r.SetFloor(9)
	if evs, _, ok := after(r, 9, all); !ok || len(evs) != 0 {
		t.Fatalf("After(9) at floor 9 = %v %v", keys(evs), ok)
	}
	// The state the caller knows is ahead of the publisher: no reset, the
	// events come later.
	if _, _, ok := r.After(12, 12, all); !ok {
		t.Fatal("After(12) with the state at 12 reset while the publisher caught up")
	}
}

// A ring that started after n, or has not started, cannot tell what
// happened since n.
func TestRingResetBeforeStart(t *testing.T) {
	t.Parallel()
	r := NewRing(8)
	if _, _, ok := r.After(0, 0, all); ok {
		t.Fatal("a ring not started claimed every event")
	}
	r.Start(20)
	r.Publish(ev(21, TopicJob, "a"))
	if _, _, ok := r.After(19, 21, all); ok {
		t.Fatal("After(19) on a ring started at 20 claimed every event above 19")
	}
	if evs, _, ok := r.After(20, 21, all); !ok || !slices.Equal(keys(evs), []string{"21:a"}) {
		t.Fatalf("After(20) = %v %v", keys(evs), ok)
	}
}

// after is r.After with no state ahead of the ring.
func after(r *Ring, n uint64, want func(Event) bool) ([]Event, Cursor, bool) {
	return r.After(n, 0, want)
}

func TestRingSlowStreamResets(t *testing.T) {
	t.Parallel()
	r := NewRing(2)
	_, cur := r.Last()
	r.Publish(ev(1, TopicJob, "a"), ev(2, TopicJob, "b"), ev(3, TopicJob, "c"))
	if _, next, ok := r.Next(cur, all); ok {
		t.Fatal("a stream that fell behind the ring was not told")
	} else if evs, _, ok := r.Next(next, all); !ok || len(evs) != 0 {
		t.Fatalf("after the reset the stream goes on from now: %v %v", keys(evs), ok)
	}
	// Wrapping many times keeps the order.
	r2 := NewRing(3)
	r2.Start(0)
	for i := uint64(1); i <= 10; i++ {
		r2.Publish(ev(i, TopicJob, fmt.Sprint(i)))
	}
	if evs, _, _ := after(r2, 7, all); !slices.Equal(keys(evs), []string{"8:8", "9:9", "10:10"}) {
		t.Fatalf("wrapped ring = %v", keys(evs))
	}
}
