package replica

import (
	"bufio"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// stream runs Serve for after into a pipe and returns its frame reader.
func stream(t *testing.T, s *server, after uint64) func() Frame {
	t.Helper()
	next := streamErr(t, s, after)
	return func() Frame {
		t.Helper()
		fr, err := next()
		if err != nil {
			t.Fatalf("read frame: %v", err)
		}
		return fr
	}
}

// streamErr is stream for a goroutine: it returns the read error.
func streamErr(t *testing.T, s *server, after uint64) func() (Frame, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(s.feed.Serve(ctx, s.fsm, after, pw, nil))
	}()
	t.Cleanup(func() { cancel(); pr.Close(); <-done })
	br := bufio.NewReader(pr)
	return func() (Frame, error) {
		type read struct {
			fr  Frame
			err error
		}
		ch := make(chan read, 1)
		go func() {
			fr, err := ReadFrame(br)
			ch <- read{fr, err}
		}()
		select {
		case r := <-ch:
			return r.fr, r.err
		case <-time.After(20 * time.Second):
			pr.Close()
			<-ch
			return Frame{}, errors.New("no frame within 20s")
		}
	}
}

func TestServe_SnapshotOnlyWhenTheRingDoesNotCover(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 8)
	log := script(t, 1, 0, 40)
	s.apply(log...)

	// The ring holds the last 8: after = the 31st entry is older.
	next := stream(t, s, log[30].index)
	if fr := next(); fr.Kind != KindSnapshot || fr.Index != s.fsm.Index() || fr.Term != log[39].term {
		t.Fatalf("first frame %v at %d term %d, want a snapshot at %d term %d", fr.Kind, fr.Index, fr.Term, s.fsm.Index(), log[39].term)
	}
	if fr := next(); fr.Kind != KindHeartbeat || fr.Index != log[39].index {
		t.Fatalf("after the snapshot: %v at %d, want the caught-up heartbeat at %d", fr.Kind, fr.Index, log[39].index)
	}

	// The 33rd is the oldest the ring holds: after it, entries only.
	next = stream(t, s, log[32].index)
	for _, want := range log[33:] {
		if fr := next(); fr.Kind != KindEntry || fr.Index != want.index || string(fr.Data) != string(want.data) {
			t.Fatalf("frame %v at %d, want entry %d", fr.Kind, fr.Index, want.index)
		}
	}
	if fr := next(); fr.Kind != KindHeartbeat {
		t.Fatalf("after the backlog: %v, want a heartbeat", fr.Kind)
	}
	// Then a new entry is pushed as soon as it is applied.
	more := script(t, 1, 0, 41)[40:]
	more[0].index = log[39].index + 5
	s.apply(more...)
	if fr := next(); fr.Kind != KindEntry || fr.Index != more[0].index {
		t.Fatalf("pushed %v at %d, want entry %d", fr.Kind, fr.Index, more[0].index)
	}
}

// A feed created after its FSM applied entries (an agent restarting, a
// client promoted to server) knows nothing below its first entry.
func TestServe_FeedStartsFromASnapshot(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 64)
	log := script(t, 2, 0, 20)
	for _, e := range log[:10] {
		s.fsm.Apply(&raft.Log{Index: e.index, Term: e.term, Type: raft.LogCommand, Data: e.data})
	}
	next := stream(t, s, 0)
	if fr := next(); fr.Kind != KindSnapshot || fr.Index != log[9].index {
		t.Fatalf("first frame %v at %d, want a snapshot at %d", fr.Kind, fr.Index, log[9].index)
	}
	s.apply(log[10:]...)
	// The feed's first entry primes it; a new stream from 0 still needs a snapshot.
	if fr := stream(t, s, 0)(); fr.Kind != KindSnapshot {
		t.Fatalf("stream from 0 after priming starts with %v, want a snapshot", fr.Kind)
	}
}

func TestServe_RestoreForcesSnapshot(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 1024)
	log := script(t, 3, 0, 60)
	older := raftfsm.New()
	for _, e := range log[:20] {
		older.Apply(&raft.Log{Index: e.index, Term: e.term, Type: raft.LogCommand, Data: e.data})
	}
	s.apply(log...)
	next := stream(t, s, s.fsm.Index())
	if fr := next(); fr.Kind != KindHeartbeat {
		t.Fatalf("an up-to-date stream starts with %v, want a heartbeat", fr.Kind)
	}
	// An operator restores a backup: the state goes back in time, below
	// the stream's position, and the ring would cover it.
	s.restore(t, []byte(bytesOf(t, older)))
	fr := next()
	if fr.Kind != KindSnapshot || fr.Index != log[19].index || string(fr.Data) != bytesOf(t, older) {
		t.Fatalf("after the restore: %v at %d, want the restored state at %d", fr.Kind, fr.Index, log[19].index)
	}
}

func TestServe_HeartbeatsWhenIdle(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 8)
	s.feed.SetHeartbeat(20 * time.Millisecond)
	s.apply(script(t, 4, 0, 3)...)
	next := stream(t, s, s.fsm.Index())
	for range 3 {
		if fr := next(); fr.Kind != KindHeartbeat || fr.Index != s.fsm.Index() {
			t.Fatalf("idle stream sent %v at %d, want heartbeats at %d", fr.Kind, fr.Index, s.fsm.Index())
		}
	}
}

// Streams opened at random positions while entries are applied as fast as
// possible, through a ring so small that it overflows: each stream
// replayed into a fresh FSM never sees an entry twice or out of order,
// and ends equal to the server.
func TestServe_NoEntryLostOrTwiceUnderRace(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 4)
	log := script(t, 5, 0, 1500)
	s.apply(log[:100]...)
	type result struct {
		copy  *raftfsm.FSM
		snaps int
		err   string
	}
	const streams = 6
	out := make(chan result, streams)
	for i := range streams {
		next := streamErr(t, s, log[i*15].index)
		go func() {
			copy, snaps := raftfsm.New(), 0
			for copy.Index() < log[len(log)-1].index {
				fr, err := next()
				if err != nil {
					out <- result{err: err.Error()}
					return
				}
				switch fr.Kind {
				case KindSnapshot:
					snaps++
					if err := copy.Restore(io.NopCloser(bytesReader(fr.Data))); err != nil {
						out <- result{err: err.Error()}
						return
					}
				case KindEntry:
					if fr.Index <= copy.Index() {
						out <- result{err: "entry " + itoa(fr.Index) + " at or below the copy's index " + itoa(copy.Index())}
						return
					}
					copy.Apply(&raft.Log{Index: fr.Index, Term: fr.Term, Type: raft.LogCommand, Data: fr.Data})
				}
			}
			out <- result{copy: copy, snaps: snaps}
		}()
	}
	s.apply(log[100:]...)
	snaps := 0
	for range streams {
		r := <-out
		snaps += r.snaps
		if r.err != "" {
			t.Fatal(r.err)
		}
		if bytesOf(t, r.copy) != bytesOf(t, s.fsm) {
			t.Fatal("a replayed stream differs from the server's state")
		}
	}
	t.Logf("%d streams, %d snapshots", streams, snaps)
}

// Streams that need a snapshot share the kept one while the ring goes on
// from it: the second stream gets the first one's snapshot and the entry
// applied since, not a second encoding.
func TestServe_SnapshotIsShared(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 8)
	log := script(t, 6, 0, 31)
	s.apply(log[:30]...)
	a := stream(t, s, 0)()
	if a.Kind != KindSnapshot || a.Index != log[29].index {
		t.Fatalf("first stream: %v at %d, want a snapshot at %d", a.Kind, a.Index, log[29].index)
	}
	s.apply(log[30])
	next := stream(t, s, 0)
	if b := next(); b.Kind != KindSnapshot || b.Index != a.Index || string(b.Data) != string(a.Data) {
		t.Fatalf("second stream: %v at %d, want the kept snapshot at %d", b.Kind, b.Index, a.Index)
	}
	if e := next(); e.Kind != KindEntry || e.Index != log[30].index {
		t.Fatalf("after the kept snapshot: %v at %d, want entry %d", e.Kind, e.Index, log[30].index)
	}
	// Once the ring has moved past it, a stream takes a new one.
	s.apply(script(t, 6, log[30].index, 10)...)
	if c := stream(t, s, 0)(); c.Kind != KindSnapshot || c.Index != s.fsm.Index() {
		t.Fatalf("third stream: %v at %d, want a new snapshot at %d", c.Kind, c.Index, s.fsm.Index())
	}
}
