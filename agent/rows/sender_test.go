package rows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
)

func TestIsDue(t *testing.T) {
	t.Parallel()
	c := Config{MinInterval: time.Second, Refresh: time.Minute}
	srv := Server{Name: "s", Boot: 7}
	sent := sendState{boot: 7, v: 3, at: t0}
	for _, tc := range []struct {
		name string
		st   sendState
		ok   bool
		srv  Server
		v    uint64
		now  time.Time
		want bool
	}{
		{"never sent", sendState{}, false, srv, 3, t0, true},
		{"current", sent, true, srv, 3, t0.Add(30 * time.Second), false},
		{"refresh due", sent, true, srv, 3, t0.Add(time.Minute), true},
		{"changed, too soon", sent, true, srv, 4, t0.Add(500 * time.Millisecond), false},
		{"changed", sent, true, srv, 4, t0.Add(time.Second), true},
		{"server restarted", sent, true, Server{Name: "s", Boot: 8}, 3, t0.Add(time.Millisecond), true},
		{"backing off", sendState{retry: t0.Add(time.Second), fails: 1}, true, srv, 3, t0, false},
		{"retry", sendState{retry: t0.Add(time.Second), fails: 1}, true, srv, 3, t0.Add(time.Second), true},
	} {
		if got := isDue(tc.st, tc.ok, tc.srv, tc.v, tc.now, c); got != tc.want {
			t.Errorf("%s: due %v, want %v", tc.name, got, tc.want)
		}
	}
	if backoff(1, c) != time.Second || backoff(3, c) != 4*time.Second || backoff(20, c) != time.Minute {
		t.Errorf("backoff %v %v %v", backoff(1, c), backoff(3, c), backoff(20, c))
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestSender_Rounds drives rounds by hand: the row reaches every server's
// table, a change is rate-limited, a new server is filled at once, a
// failing one is retried with backoff.
func TestSender_Rounds(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: t0}
	tables := map[string]*Table{"s1": NewTable(), "s2": NewTable(), "s3": NewTable()}
	servers := []Server{{"s1", 1}, {"s2", 1}}
	var mu sync.Mutex
	down := map[string]bool{}
	sends := 0
	s := NewSender(Deps{Node: "me", Boot: 42, Now: clk.now,
		Config:  Config{MinInterval: time.Second, Refresh: time.Minute},
		Servers: func() []Server { mu.Lock(); defer mu.Unlock(); return append([]Server(nil), servers...) },
		Send: func(_ context.Context, srv string, body []byte) error {
			mu.Lock()
			defer mu.Unlock()
			if down[srv] {
				return errors.New("connection refused")
			}
			sends++
			r, err := gossip.DecodeNetRow(body)
			if err != nil {
				return err
			}
			_, err = tables[srv].Put(r, clk.now())
			return err
		}})
	ctx := context.Background()
	holds := func(srv string, v uint64) bool { r, ok := tables[srv].Get("me"); return ok && r.V == v && r.Boot == 42 }

	s.round(ctx)
	if sends != 0 {
		t.Fatal("sent before any row was set")
	}
	s.Set([]gossip.NetEntry{{Peer: "x", BW: 10, BWAt: 1}})
	s.round(ctx)
	if !holds("s1", 1) || !holds("s2", 1) || sends != 2 {
		t.Fatalf("first row not on both servers (%d sends)", sends)
	}
	s.Set([]gossip.NetEntry{{Peer: "x", BW: 20, BWAt: 2}})
	clk.add(200 * time.Millisecond)
	s.round(ctx)
	if holds("s1", 2) || sends != 2 {
		t.Fatal("a change went out before MinInterval")
	}
	s.Set([]gossip.NetEntry{{Peer: "x", BW: 20, BWAt: 2}}) // the same row: no new version
	clk.add(time.Second)
	mu.Lock()
	servers = append(servers, Server{"s3", 9})
	down["s2"] = true
	mu.Unlock()
	s.round(ctx)
	if !holds("s1", 2) || !holds("s3", 2) || holds("s2", 2) {
		t.Fatal("version 2 should be on s1 and the new s3, not on the failing s2")
	}
	mu.Lock()
	down["s2"] = false
	mu.Unlock()
	clk.add(500 * time.Millisecond)
	s.round(ctx)
	if holds("s2", 2) {
		t.Fatal("retried before the backoff")
	}
	clk.add(600 * time.Millisecond)
	s.round(ctx)
	if !holds("s2", 2) {
		t.Fatal("not retried after the backoff")
	}
	// s3 restarts with an empty table: filled at the next round.
	tables["s3"] = NewTable()
	mu.Lock()
	servers[2].Boot = 10
	mu.Unlock()
	n := sends
	s.round(ctx)
	if !holds("s3", 2) || sends != n+1 {
		t.Fatalf("restarted server not refilled at once (%d sends)", sends-n)
	}
	// Unchanged: nothing until Refresh, then every server once.
	clk.add(30 * time.Second)
	s.round(ctx)
	if sends != n+1 {
		t.Fatal("an unchanged row went out before Refresh")
	}
	clk.add(31 * time.Second)
	s.round(ctx)
	if sends != n+4 {
		t.Fatalf("refresh sent %d rows, want 3", sends-n-1)
	}
	if s.Sends() != uint64(sends) || s.SentBytes() == 0 {
		t.Fatalf("counted %d sends, %d bytes; made %d", s.Sends(), s.SentBytes(), sends)
	}
}
