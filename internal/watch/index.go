package watch

import (
	"context"
	"sync"
)

// Index is a counter that only grows, with a channel closed on each raise.
// The zero value is an index at 0, ready to use.
type Index struct {
	mu sync.Mutex
	v  uint64
	ch chan struct{}
}

// chLocked is the channel of the current value, made on first use.
func (x *Index) chLocked() chan struct{} {
	if x.ch == nil {
		x.ch = make(chan struct{})
	}
	return x.ch
}

// Raise sets the index to v when v is above it and wakes every waiter;
// a lower or equal v changes nothing (a restored snapshot older than what
// readers were told would otherwise answer them with a past they have
// seen).
func (x *Index) Raise(v uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if v <= x.v {
		return
	}
	x.v = v
	if x.ch != nil {
		close(x.ch)
		x.ch = nil
	}
}

// Bump raises the index by one and returns the new value.
func (x *Index) Bump() uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.v++
	if x.ch != nil {
		close(x.ch)
		x.ch = nil
	}
	return x.v
}

// Get is the current value and a channel closed when it next rises.
func (x *Index) Get() (uint64, <-chan struct{}) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.v, x.chLocked()
}

// Wait returns the value once it is above after, or the current value
// when ctx ends first.
func (x *Index) Wait(ctx context.Context, after uint64) uint64 {
	for {
		v, ch := x.Get()
		if v > after {
			return v
		}
		select {
		case <-ch:
		case <-ctx.Done():
			v, _ := x.Get()
			return v
		}
	}
}
