package replica

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// DefaultHeartbeat is how often Serve writes a heartbeat on an idle
// stream. A follower's Config.Silence must be several of these.
const DefaultHeartbeat = time.Second

// entry is one applied command entry. Data is never modified once
// recorded, so streams share it without copying.
type entry struct {
	index, term uint64
	data        []byte
}

// Feed is the server side: a bounded ring of the command entries the
// local FSM applied, and the streams that push them to followers. Applied
// and Restored are called from raft's FSM goroutine (after the FSM
// changed); Serve from any number of request goroutines.
type Feed struct {
	mu   sync.Mutex
	ring []entry // circular, len(ring) == keep
	head int     // position of the oldest entry
	n    int     // entries held
	// floor: entries at or below it may be missing from the ring (evicted,
	// or applied before the feed saw anything); every entry above it up to
	// last is in the ring. Meaningful only when primed.
	floor uint64
	// primed is false until the first entry after the feed's creation or
	// after a restore: until then the ring covers nothing and every new
	// stream starts from a snapshot.
	primed bool
	// last is the index of the newest entry (or of the restored state),
	// lastTerm its term, 0 unknown.
	last, lastTerm uint64
	// gen counts restores: a stream that sees it move sends a snapshot,
	// whatever its position, since the state may have gone back in time
	// (an operator's snapshot restore).
	gen uint64
	// snap is the last snapshot a stream took (next).
	snap *snapshot
	// changed is closed (and replaced) at every change, waking the streams.
	changed chan struct{}

	heartbeat time.Duration
	// health says whether the local state is fit to stream (SetHealth).
	health func() error
}

// NewFeed returns a feed that keeps the last keep command entries (at
// least 1). A follower further behind than that gets a snapshot.
func NewFeed(keep int) *Feed {
	keep = max(keep, 1)
	return &Feed{ring: make([]entry, keep), changed: make(chan struct{}), heartbeat: DefaultHeartbeat}
}

// SetHeartbeat sets how long Serve lets a stream idle before it writes a
// heartbeat (DefaultHeartbeat). For tests; call it before Serve.
func (f *Feed) SetHeartbeat(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d > 0 {
		f.heartbeat = d
	}
}

// SetHealth makes Serve check fn before a stream starts and at every
// heartbeat: while it returns an error, no stream is opened and open ones
// end, so followers move to another server. A server cut off from its raft
// leader, or shut down, keeps an FSM that no longer advances; without this
// its heartbeats would keep its followers on that stale state.
func (f *Feed) SetHealth(fn func() error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.health = fn
}

// healthy runs the health check, nil when none is set.
func (f *Feed) healthy() error {
	f.mu.Lock()
	fn := f.health
	f.mu.Unlock()
	if fn == nil {
		return nil
	}
	if err := fn(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnhealthy, err)
	}
	return nil
}

// Applied records a command entry the FSM has just applied (raftnode's
// Config.OnApply). data must not be modified afterwards (raft's log
// entries are not). It never blocks on a stream.
func (f *Feed) Applied(index, term uint64, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.primed && index <= f.last {
		return // raft applies in order; nothing to stream twice
	}
	if !f.primed {
		// Everything up to the entry before this one reached the FSM
		// unseen (raft indexes have gaps, so index-1 is the safe floor).
		f.floor, f.primed, f.n, f.head = index-1, true, 0, 0
	}
	if f.n == len(f.ring) {
		f.floor = f.ring[f.head].index
		f.ring[f.head] = entry{}
		f.head = (f.head + 1) % len(f.ring)
		f.n--
	}
	f.ring[(f.head+f.n)%len(f.ring)] = entry{index: index, term: term, data: data}
	f.n++
	f.last, f.lastTerm = index, term
	f.notify()
}

// Restored records that the FSM's whole state was replaced (raftnode's
// Config.OnRestore: a snapshot installed at start or from the leader, or
// an operator's restore) and now stands at index. Every stream sends a
// snapshot next; the ring starts over.
func (f *Feed) Restored(index uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.ring)
	f.n, f.head, f.primed, f.snap = 0, 0, false, nil
	f.last, f.lastTerm = index, 0
	f.gen++
	f.notify()
}

// notify wakes every stream; f.mu is held.
func (f *Feed) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Last is the index of the newest entry the feed holds (or of the last
// restore).
func (f *Feed) Last() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// since returns the entries above pos; f.mu is held.
func (f *Feed) since(pos uint64) []entry {
	at := func(i int) entry { return f.ring[(f.head+i)%len(f.ring)] }
	i := sort.Search(f.n, func(i int) bool { return at(i).index > pos })
	out := make([]entry, 0, f.n-i)
	for ; i < f.n; i++ {
		out = append(out, at(i))
	}
	return out
}

// batch is what one turn of Serve writes.
type batch struct {
	snap    *Frame
	entries []entry
	last    uint64
	changed <-chan struct{}
}

// snapshot is an encoded state the feed keeps, so that many streams that
// need one at once (clients reconnecting after their server died) share
// one encoding instead of each taking its own.
type snapshot struct {
	gen, index, term uint64
	data             []byte
}

func (s *snapshot) frame() *Frame {
	return &Frame{Kind: KindSnapshot, Index: s.index, Term: s.term, Data: s.data}
}

// next returns what a stream at pos (of restore generation gen) must
// write: a snapshot when the ring does not reach back to pos or the state
// was restored, then the entries above pos (above the snapshot's index),
// and the generation it is now at.
//
// A snapshot at index S fits when the ring holds every entry above S
// (S >= floor, same generation): Applied runs after the FSM applied, so an
// entry the FSM applied but the ring has not seen yet is above S and
// comes next turn, and one at or below S is in the snapshot and skipped.
// The state is encoded outside the feed's lock (Applied, on raft's FSM
// goroutine, must not wait for it) and checked against the ring after;
// the kept snapshot serves when it still fits.
func (f *Feed) next(fsm *raftfsm.FSM, pos, gen uint64, first bool) (batch, uint64, error) {
	for try := 0; ; try++ {
		f.mu.Lock()
		if !((first && !f.primed) || gen != f.gen || (f.primed && pos < f.floor)) {
			b := batch{entries: f.since(pos), last: f.last, changed: f.changed}
			f.mu.Unlock()
			return b, gen, nil
		}
		if k := f.snap; k != nil && k.gen == f.gen && f.primed && k.index >= f.floor && k.index >= pos {
			b := batch{snap: k.frame(), entries: f.since(k.index), last: f.last, changed: f.changed}
			g := f.gen
			f.mu.Unlock()
			return b, g, nil
		}
		if try >= 3 {
			// Entries overrun the ring faster than the state encodes:
			// encode under the lock, holding Applied back this once.
			defer f.mu.Unlock()
			data, idx, err := fsm.SnapshotBytes()
			if err != nil {
				return batch{}, gen, fmt.Errorf("replica snapshot: %w", err)
			}
			k := f.keep(f.gen, idx, data)
			return batch{snap: k.frame(), entries: f.since(idx), last: f.last, changed: f.changed}, f.gen, nil
		}
		g := f.gen
		f.mu.Unlock()
		data, idx, err := fsm.SnapshotBytes()
		if err != nil {
			return batch{}, gen, fmt.Errorf("replica snapshot: %w", err)
		}
		f.mu.Lock()
		if f.gen == g && (!f.primed || idx >= f.floor) {
			k := f.keep(g, idx, data)
			b := batch{snap: k.frame(), entries: f.since(idx), last: f.last, changed: f.changed}
			f.mu.Unlock()
			return b, g, nil
		}
		f.mu.Unlock() // restored or overrun meanwhile: again
	}
}

// keep records a snapshot of generation gen at idx as the one to share
// unless a newer one is kept; f.mu is held.
func (f *Feed) keep(gen, idx uint64, data []byte) *snapshot {
	var term uint64
	if idx == f.last {
		term = f.lastTerm
	}
	k := &snapshot{gen: gen, index: idx, term: term, data: data}
	if f.snap == nil || f.snap.gen != gen || f.snap.index < idx {
		f.snap = k
	}
	return k
}

// Serve streams the replicated state to one follower that holds every
// entry up to after (0: nothing): a snapshot frame of fsm when the ring
// does not reach back to after, then every entry above it as it is
// applied, and a heartbeat after each catch-up and whenever the stream
// idles for the heartbeat interval. flush (may be nil) is called after
// each burst so that frames leave at once. Serve returns nil when ctx
// ends, or the first write error, or ErrUnhealthy (before writing
// anything if the feed is unhealthy from the start; see SetHealth).
func (f *Feed) Serve(ctx context.Context, fsm *raftfsm.FSM, after uint64, w io.Writer, flush func()) error {
	if err := f.healthy(); err != nil {
		return err
	}
	f.mu.Lock()
	every := f.heartbeat
	gen := f.gen
	f.mu.Unlock()
	bw := bufio.NewWriterSize(w, 64<<10)
	send := func() error {
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("replica stream: %w", err)
		}
		if flush != nil {
			flush()
		}
		return nil
	}
	hb := time.NewTimer(every)
	defer hb.Stop()
	pos := after
	for first := true; ; first = false {
		b, g, err := f.next(fsm, pos, gen, first)
		if err != nil {
			return err
		}
		gen = g
		if b.snap != nil {
			if err := WriteFrame(bw, *b.snap); err != nil {
				return err
			}
			pos = b.snap.Index
		}
		for _, e := range b.entries {
			if err := WriteFrame(bw, Frame{Kind: KindEntry, Index: e.index, Term: e.term, Data: e.data}); err != nil {
				return err
			}
			pos = e.index
		}
		if first {
			// Tells the follower how far the server is: at or past it,
			// the follower has caught up (Follower.Ready).
			if err := WriteFrame(bw, Frame{Kind: KindHeartbeat, Index: b.last}); err != nil {
				return err
			}
		}
		if first || b.snap != nil || len(b.entries) > 0 {
			if err := send(); err != nil {
				return err
			}
			hb.Reset(every)
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-b.changed:
				break wait
			case <-hb.C:
				if err := f.healthy(); err != nil {
					return err
				}
				if err := WriteFrame(bw, Frame{Kind: KindHeartbeat, Index: f.Last()}); err != nil {
					return err
				}
				if err := send(); err != nil {
					return err
				}
				hb.Reset(every)
			}
		}
	}
}
