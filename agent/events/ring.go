package events

import "sync"

// DefaultRingSize is how many events a Ring keeps by default.
const DefaultRingSize = 4096

// Cursor is a stream's place in a Ring: the sequence number of the last
// event it was given. It is only meaningful to the Ring that made it.
type Cursor uint64

// Ring keeps the last events in the order they were published. It is
// safe for one publisher and any number of readers.
type Ring struct {
	mu sync.Mutex
	// buf is circular: n events from head on, oldest first.
	buf     []Event
	head, n int
	// seq numbers published events from 1; buf holds those after seq-n.
	seq uint64
	// dropped is the index of the newest event the ring let go (0: none).
	dropped uint64
	// since is the index from which the ring holds every event (Start);
	// before Start, none.
	since   uint64
	started bool
	// last is the newest index published, or the floor set by SetFloor.
	last    uint64
	changed chan struct{}
}

// NewRing returns a ring of size events (DefaultRingSize when size < 1).
func NewRing(size int) *Ring {
	if size < 1 {
		size = DefaultRingSize
	}
	return &Ring{buf: make([]Event, size), changed: make(chan struct{})}
}

// Publish appends events, oldest first, and wakes the streams. Indexes
// must not go down.
func (r *Ring) Publish(evs ...Event) {
	if len(evs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range evs {
		if r.n == len(r.buf) {
			r.dropped = r.buf[r.head].Index
			r.buf[r.head] = e
			r.head = (r.head + 1) % len(r.buf)
		} else {
			r.buf[(r.head+r.n)%len(r.buf)] = e
			r.n++
		}
		r.seq++
		r.last = max(r.last, e.Index)
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// Start records that the ring holds every event above index from now on:
// the publisher's first look, which only remembers what it saw. A stream
// resumed from below it (events of a time the publisher was not
// watching: before this agent started) resets.
func (r *Ring) Start(index uint64) {
	r.mu.Lock()
	r.since, r.started = index, true
	r.last = max(r.last, index)
	r.mu.Unlock()
}

// SetFloor records that the state is at index with nothing published for
// it: an index at or below it is not from the future (After).
func (r *Ring) SetFloor(index uint64) {
	r.mu.Lock()
	r.last = max(r.last, index)
	r.mu.Unlock()
}

// Changed is closed at the next Publish.
func (r *Ring) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// Last is the newest index the ring knows and the cursor after its
// newest event: a stream that starts from now.
func (r *Ring) Last() (uint64, Cursor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, Cursor(r.seq)
}

// After is the start of a stream resumed from index n: the kept events
// of the wanted topics above n, and those of gossip's topics at n (see
// the package doc), with the cursor to go on from. ok is false when the
// ring no longer holds every event above n (it let some go, or it started
// after n), or n is above both the ring's newest index and ceiling, the
// index of the state the caller knows (an index from the future: another
// cluster's, or a state this agent has not applied yet); the stream then
// resets and goes on from the cursor, now. An n between the ring's newest
// index and ceiling is the publisher still behind the state: its events
// come through Next.
func (r *Ring) After(n, ceiling uint64, want func(Event) bool) (evs []Event, cur Cursor, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur = Cursor(r.seq)
	if !r.started || n < r.since || n < r.dropped || n > max(r.last, ceiling) {
		return nil, cur, false
	}
	for i := range r.n {
		if e := r.at(i); (e.Index > n || e.Index == n && gossiped(e.Topic)) && want(e) {
			evs = append(evs, e)
		}
	}
	return evs, cur, true
}

// Next is the kept events of the wanted topics after cur, and the cursor
// after them; ok is false when some were dropped before the stream read
// them (a stream too slow for the ring), and the stream then resets.
func (r *Ring) Next(cur Cursor, want func(Event) bool) (evs []Event, next Cursor, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	oldest := r.seq - uint64(r.n) // the sequence number before the oldest kept event
	if uint64(cur) < oldest {
		return nil, Cursor(r.seq), false
	}
	for i := int(uint64(cur) - oldest); i < r.n; i++ {
		if e := r.at(i); want(e) {
			evs = append(evs, e)
		}
	}
	return evs, Cursor(r.seq), true
}

// at is the i-th kept event, oldest first (r.mu held).
func (r *Ring) at(i int) Event { return r.buf[(r.head+i)%len(r.buf)] }
