package rows

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
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
			r, err := nodestate.DecodeNetRow(body)
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
	s.Set([]nodestate.NetEntry{{Peer: "x", AvailMbps: 10, BWAt: 1}})
	s.round(ctx)
	if !holds("s1", 1) || !holds("s2", 1) || sends != 2 {
		t.Fatalf("first row not on both servers (%d sends)", sends)
	}
	s.Set([]nodestate.NetEntry{{Peer: "x", AvailMbps: 20, BWAt: 2}})
	clk.add(200 * time.Millisecond)
	s.round(ctx)
	if holds("s1", 2) || sends != 2 {
		t.Fatal("a change went out before MinInterval")
	}
	s.Set([]nodestate.NetEntry{{Peer: "x", AvailMbps: 20, BWAt: 2}}) // the same row: no new version
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

// TestSender_Deltas: after the whole row, a server gets only the cells
// that changed and the peers dropped; a server that lost the row refuses
// a delta and gets the whole row on the retry; a server further behind
// than the history gets the whole row.
func TestSender_Deltas(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: t0}
	table := NewTable()
	var bodies []nodestate.NetRow
	s := NewSender(Deps{Node: "me", Boot: 1, Now: clk.now, Config: Config{MinInterval: time.Second, Refresh: time.Minute},
		Servers: func() []Server { return []Server{{"srv", 1}} },
		Send: func(_ context.Context, _ string, body []byte) error {
			r, err := nodestate.DecodeNetRow(body)
			if err != nil {
				return err
			}
			bodies = append(bodies, r)
			_, err = table.Put(r, clk.now())
			return err
		}})
	ctx := context.Background()
	row := make([]nodestate.NetEntry, 10)
	for i := range row {
		row[i] = nodestate.NetEntry{Peer: string(rune('a' + i)), AvailMbps: float64(i + 1), BWAt: 1}
	}
	step := func(cells []nodestate.NetEntry) nodestate.NetRow {
		t.Helper()
		s.Set(cells)
		clk.add(time.Second)
		s.round(ctx)
		got, _ := table.Get("me")
		if own := s.Row(); got.V != own.V || !slices.Equal(got.Cells, own.Cells) {
			t.Fatalf("server holds %+v, owner %+v", got, own)
		}
		return bodies[len(bodies)-1]
	}
	if b := step(row); b.Base != 0 || len(b.Cells) != 10 {
		t.Fatalf("first send: %+v, want the whole row", b)
	}
	row[3].AvailMbps = 99
	if b := step(row); b.Base != 1 || len(b.Cells) != 1 || b.Cells[0].Peer != "d" {
		t.Fatalf("one cell changed: sent %+v", b)
	}
	row = append(row[:2:2], row[3:]...) // drop peer c
	if b := step(row); b.Base != 2 || len(b.Cells) != 0 || len(b.Gone) != 1 || b.Gone[0] != "c" {
		t.Fatalf("one peer dropped: sent %+v", b)
	}
	// The server loses the row (pruned) without restarting.
	table = NewTable()
	row[0].AvailMbps = 7
	s.Set(row)
	clk.add(time.Second)
	s.round(ctx)
	if _, ok := table.Get("me"); ok {
		t.Fatal("a delta applied to an empty table")
	}
	clk.add(time.Second)
	if b := step(row); b.Base != 0 || len(b.Cells) != 9 {
		t.Fatalf("retry after a refused delta: %+v, want the whole row", b)
	}
	// More versions than the history holds, none sent (the server is
	// listed but each Set is followed by no round).
	for i := range histLen + 1 {
		row[1].AvailMbps = float64(1000 + i)
		s.Set(row)
	}
	if b := step(row); b.Base != 0 {
		t.Fatalf("a server %d versions behind got a delta: %+v", histLen+1, b)
	}
}
