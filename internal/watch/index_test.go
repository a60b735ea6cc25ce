package watch

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestWaitReturnsOnRaise(t *testing.T) {
	t.Parallel()
	var x Index
	x.Raise(3)
	got := make(chan uint64)
	go func() { got <- x.Wait(context.Background(), 3) }()
	_, ch := x.Get()
	x.Raise(2) // lower: no change, no wake-up
	select {
	case <-ch:
		t.Fatal("a lower value woke the waiters")
	default:
	}
	x.Raise(5)
	if v := <-got; v != 5 {
		t.Fatalf("Wait = %d, want 5", v)
	}
}

func TestWaitAlreadyPast(t *testing.T) {
	t.Parallel()
	var x Index
	x.Raise(7)
	if v := x.Wait(context.Background(), 6); v != 7 {
		t.Fatalf("Wait(6) = %d, want 7 at once", v)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	var x Index
	x.Bump()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan uint64)
	go func() { done <- x.Wait(ctx, 1) }()
	cancel()
	select {
	case v := <-done:
		if v != 1 {
			t.Fatalf("Wait after cancel = %d, want the current 1", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return when its context ended")
	}
}

func TestManyWaitersOneRaise(t *testing.T) {
	t.Parallel()
	var x Index
	var wg sync.WaitGroup
	ready := make(chan struct{}, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready <- struct{}{}
			if v := x.Wait(context.Background(), 0); v != 1 {
				t.Errorf("Wait = %d, want 1", v)
			}
		}()
	}
	for range 50 {
		<-ready
	}
	x.Bump()
	wg.Wait()
}
