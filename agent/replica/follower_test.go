package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestFollower_ConvergesOnARandomLog(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 64)
	log := script(t, 10, 0, 1000)
	s.apply(log[:200]...)
	wake := make(chan struct{}, 1)
	copy := raftfsm.New()
	f := follow(t, pool{"s0": s}, copy, func(c *Config) { c.Wake = []chan struct{}{wake} })
	select {
	case <-f.Ready():
	case <-time.After(20 * time.Second):
		t.Fatal("follower never caught up")
	}
	if copy.Index() < log[199].index {
		t.Fatalf("ready at index %d, before the server's %d", copy.Index(), log[199].index)
	}
	select {
	case <-wake:
	default:
		t.Fatal("catching up did not signal the wake channel")
	}
	for i := 200; i < len(log); i += 50 {
		s.apply(log[i : i+50]...)
	}
	waitFor(t, "the copy to equal the server", func() bool { return converged(t, s, copy) },
		func() string { return fmt.Sprintf("copy at %d, server at %d", copy.Index(), s.fsm.Index()) })
	if f.Server() != "s0" {
		t.Fatalf("following %q, want s0", f.Server())
	}
}

func TestFollower_FarBehindGetsOneSnapshotThenEntries(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 16)
	log := script(t, 11, 0, 310)
	s.apply(log[:300]...)
	copy := raftfsm.New()
	f := follow(t, pool{"s0": s}, copy)
	waitFor(t, "the copy to catch up", func() bool { return converged(t, s, copy) })
	if st := f.Stats(); st.Snapshots != 1 || st.Entries != 0 {
		t.Fatalf("caught up 300 entries behind with %+v, want one snapshot and no entry", st)
	}
	// Fewer than the ring holds, so they come as entries however late
	// the stream wakes.
	s.apply(log[300:]...)
	waitFor(t, "the copy to follow", func() bool { return converged(t, s, copy) })
	if st := f.Stats(); st.Snapshots != 1 || st.Entries != 10 {
		t.Fatalf("followed 10 entries with %+v, want them as 10 entries", st)
	}
}

func TestFollower_FollowsARestore(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 1024)
	log := script(t, 12, 0, 200)
	s.apply(log[:150]...)
	copy := raftfsm.New()
	f := follow(t, pool{"s0": s}, copy)
	waitFor(t, "the copy to catch up", func() bool { return converged(t, s, copy) })
	before := f.Stats().Snapshots

	// Restore a backup of an older state, then go on with new entries.
	older := newServer(t, "old", 8)
	older.apply(log[:40]...)
	s.restore(t, []byte(bytesOf(t, older.fsm)))
	waitFor(t, "the copy to take the restored state", func() bool { return converged(t, s, copy) })
	if got := f.Stats().Snapshots; got != before+1 {
		t.Fatalf("%d snapshots after the restore, want %d", got, before+1)
	}
	next := script(t, 13, log[149].index, 50)
	s.apply(next...)
	waitFor(t, "the copy to follow the restored server", func() bool { return converged(t, s, copy) })
}

func TestFollower_ReconnectsToAnotherServer(t *testing.T) {
	t.Parallel()
	s0, s1 := newServer(t, "s0", 256), newServer(t, "s1", 256)
	log := script(t, 14, 0, 300)
	s0.apply(log[:100]...)
	s1.apply(log[:100]...)
	copy := raftfsm.New()
	f := follow(t, pool{"s0": s0, "s1": s1}, copy)
	waitFor(t, "the copy to catch up with s0", func() bool { return converged(t, s0, copy) && f.Server() == "s0" })
	snaps := f.Stats().Snapshots

	s0.down() // its streams end, new ones are refused
	s1.apply(log[100:]...)
	waitFor(t, "the copy to follow s1", func() bool { return converged(t, s1, copy) && f.Server() == "s1" },
		func() string { return fmt.Sprintf("following %q at %d", f.Server(), copy.Index()) })
	if st := f.Stats(); st.Snapshots != snaps || st.Connects < 2 {
		t.Fatalf("after the switch: %+v, want %d snapshots (the copy kept its index) and a second stream", st, snaps)
	}
}

func TestFollower_SilentServerIsDropped(t *testing.T) {
	t.Parallel()
	s0, s1 := newServer(t, "s0", 64), newServer(t, "s1", 64)
	s0.hung = true // accepts the stream, then sends nothing
	log := script(t, 15, 0, 50)
	s1.apply(log...)
	copy := raftfsm.New()
	start := time.Now()
	f := follow(t, pool{"s0": s0, "s1": s1}, copy, func(c *Config) { c.Silence = 300 * time.Millisecond })
	waitFor(t, "the copy to follow s1", func() bool { return converged(t, s1, copy) })
	if s0.streams() == 0 {
		t.Fatal("the follower never tried the silent server")
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("left the silent server after %v, before the silence of 300ms", d)
	}
	_ = f
}

func TestFollower_BadStreamIsRefusedAndLeft(t *testing.T) {
	t.Parallel()
	s1 := newServer(t, "s1", 64)
	log := script(t, 16, 0, 30)
	s1.apply(log...)
	var garbage atomic.Int32
	open := func(ctx context.Context, server string, after uint64) (io.ReadCloser, error) {
		if server == "s0" {
			garbage.Add(1)
			// A valid entry frame whose command raftfsm refuses would be
			// applied (and refused, as on a server): send a frame no decoder takes.
			return io.NopCloser(strings.NewReader(string(header(9, 16)) + strings.Repeat("x", 16))), nil
		}
		return s1.open(ctx, after)
	}
	copy := raftfsm.New()
	follow(t, pool{"s0": nil, "s1": s1}, copy, func(c *Config) {
		c.Servers = func() []string { return []string{"s0", "s1"} }
		c.Open = open
	})
	waitFor(t, "the copy to follow s1", func() bool { return converged(t, s1, copy) })
	if garbage.Load() == 0 {
		t.Fatal("the bad server was never tried")
	}
}

// An entry at or below the copy's index is refused, not applied twice.
func TestFollower_RefusesAnEntryTwice(t *testing.T) {
	t.Parallel()
	log := script(t, 17, 0, 5)
	copy := raftfsm.New()
	f := &Follower{cfg: Config{FSM: copy}.withDefaults(), ready: make(chan struct{})}
	for _, e := range log {
		if err := f.apply(Frame{Kind: KindEntry, Index: e.index, Term: e.term, Data: e.data}); err != nil {
			t.Fatal(err)
		}
	}
	want := bytesOf(t, copy)
	e := log[3]
	err := f.apply(Frame{Kind: KindEntry, Index: e.index, Term: e.term, Data: e.data})
	if !errors.Is(err, ErrOutOfOrder) || !strings.Contains(err.Error(), fmt.Sprintf("entry %d, the copy is at %d", e.index, log[4].index)) {
		t.Fatalf("replayed entry: %v, want ErrOutOfOrder naming both indexes", err)
	}
	if bytesOf(t, copy) != want {
		t.Fatal("a refused entry changed the copy")
	}
}

// The stream over real HTTPS: a follower opened with OpenHTTP mirrors a
// server whose handler is Feed.Serve with the response's flush.
func TestFollower_OverHTTPS(t *testing.T) {
	t.Parallel()
	s := newServer(t, "s0", 64)
	log := script(t, 18, 0, 120)
	s.apply(log[:60]...)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		after, err := strconv.ParseUint(r.URL.Query().Get("after"), 10, 64)
		if err != nil || r.URL.Path != "/v1/replicate" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rc := http.NewResponseController(w)
		_ = s.feed.Serve(r.Context(), s.fsm, after, w, func() { _ = rc.Flush() })
	}))
	t.Cleanup(srv.Close)
	copy := raftfsm.New()
	open := OpenHTTP(srv.Client(), func(string) (string, error) { return srv.URL, nil })
	follow(t, pool{"s0": s}, copy, func(c *Config) { c.Open = open })
	waitFor(t, "the copy to catch up over HTTPS", func() bool { return converged(t, s, copy) })
	// Entries are pushed one at a time: each arrives without the next one
	// to push it out of a buffer.
	for _, e := range log[60:] {
		s.apply(e)
		waitFor(t, fmt.Sprintf("entry %d to arrive", e.index), func() bool { return copy.Index() == e.index })
	}
	if bytesOf(t, copy) != bytesOf(t, s.fsm) {
		t.Fatal("the copy differs from the server")
	}

	// A refusal is an error naming the status.
	bad := OpenHTTP(srv.Client(), func(string) (string, error) { return srv.URL + "/nope", nil })
	if _, err := bad(context.Background(), "s0", 0); err == nil || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Fatalf("open a refused stream: %v, want the 400", err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{FSM: raftfsm.New(), Servers: func() []string { return nil }, Open: pool{}.open}.withDefaults()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no FSM", func(c *Config) { c.FSM = nil }, "Config.FSM"},
		{"no servers", func(c *Config) { c.Servers = nil }, "Config.Servers"},
		{"no open", func(c *Config) { c.Open = nil }, "Config.Open"},
		{"negative silence", func(c *Config) { c.Silence = -1 }, "Config.Silence -1ns"},
		{"backoff upside down", func(c *Config) { c.MaxBackoff = time.Millisecond }, "MinBackoff 100ms must be positive and at most MaxBackoff 1ms"},
	} {
		c2 := ok
		c.edit(&c2)
		if err := c2.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
		if _, err := Start(context.Background(), c2); err == nil {
			t.Errorf("%s: Start accepted it", c.name)
		}
	}
}

// A server whose state stops being current (cut off from its leader)
// ends its streams at the next heartbeat and opens none: its followers
// move to a server that is current.
func TestFollower_LeavesAServerThatIsNotCurrent(t *testing.T) {
	t.Parallel()
	s0, s1 := newServer(t, "s0", 64), newServer(t, "s1", 64)
	var stale atomic.Bool
	s0.feed.SetHeartbeat(20 * time.Millisecond)
	s0.feed.SetHealth(func() error {
		if stale.Load() {
			return errors.New("no word from a raft leader")
		}
		return nil
	})
	log := script(t, 19, 0, 60)
	s0.apply(log[:30]...)
	s1.apply(log[:30]...)
	copy := raftfsm.New()
	f := follow(t, pool{"s0": s0, "s1": s1}, copy)
	waitFor(t, "the copy to follow s0", func() bool { return converged(t, s0, copy) && f.Server() == "s0" })

	stale.Store(true) // s0 stays up, its state frozen
	s1.apply(log[30:]...)
	waitFor(t, "the copy to follow s1", func() bool { return converged(t, s1, copy) && f.Server() == "s1" },
		func() string { return fmt.Sprintf("following %q at %d", f.Server(), copy.Index()) })
	if err := s0.feed.Serve(context.Background(), s0.fsm, 0, io.Discard, nil); !errors.Is(err, ErrUnhealthy) || !strings.Contains(err.Error(), "no word from a raft leader") {
		t.Fatalf("serve while not current: %v, want ErrUnhealthy with the reason", err)
	}
}
