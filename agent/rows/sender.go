package rows

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// Config tunes the sender.
type Config struct {
	// MinInterval is the least time between two sends of a changed row to
	// one server. Default 1s.
	MinInterval time.Duration
	// Refresh is how often the row goes to every server even when it has
	// not changed, so a server that lost it (a pruned row of a node that
	// came back) has it again within one Refresh. A new or restarted
	// server gets it within MinInterval. Default 1m.
	Refresh time.Duration
	// SendTimeout bounds one send. Default 10s.
	SendTimeout time.Duration
}

// DefaultConfig is the sender's defaults.
func DefaultConfig() Config {
	return Config{MinInterval: time.Second, Refresh: time.Minute, SendTimeout: 10 * time.Second}
}

// OrDefault fills zero fields from DefaultConfig.
func (c Config) OrDefault() Config {
	d := DefaultConfig()
	if c.MinInterval <= 0 {
		c.MinInterval = d.MinInterval
	}
	if c.Refresh <= 0 {
		c.Refresh = d.Refresh
	}
	if c.SendTimeout <= 0 {
		c.SendTimeout = d.SendTimeout
	}
	return c
}

// Validate names the first setting out of bounds, and the agent flag
// that sets it. A zero field stands for the default, so the order of the
// intervals is checked on the defaults filled in.
func (c Config) Validate() error {
	switch {
	case c.MinInterval < 0:
		return fmt.Errorf("network row min interval %v is negative (--netrow-min-interval; 0 for the default %v)", c.MinInterval, DefaultConfig().MinInterval)
	case c.Refresh < 0:
		return fmt.Errorf("network row refresh %v is negative (--netrow-refresh; 0 for the default %v)", c.Refresh, DefaultConfig().Refresh)
	case c.SendTimeout < 0:
		return fmt.Errorf("network row send timeout %v is negative (--netrow-send-timeout; 0 for the default %v)", c.SendTimeout, DefaultConfig().SendTimeout)
	}
	if d := c.OrDefault(); d.MinInterval > d.Refresh {
		return fmt.Errorf("network row min interval %v exceeds the refresh %v: raise --netrow-refresh or lower --netrow-min-interval", d.MinInterval, d.Refresh)
	}
	return nil
}

// Server is one server as gossip shows it: its name and its boot, whose
// change means it restarted with an empty table.
type Server struct {
	Name string
	Boot int64
}

// Deps is what a Sender is built from.
type Deps struct {
	Config Config
	// Node and Boot are this node's name and gossip boot: the row's owner
	// and the first half of its version.
	Node string
	Boot int64
	// Servers lists the servers now (this node among them if it is one).
	Servers func() []Server
	// Send delivers an encoded row to one server; it must honour ctx.
	Send func(ctx context.Context, server string, body []byte) error
	// Now is the clock (default time.Now); Log the logger.
	Now func() time.Time
	Log *slog.Logger
}

// Sender holds this node's row and keeps the servers' copies current.
type Sender struct {
	d    Deps
	cfg  Config
	wake chan struct{}

	mu  sync.Mutex
	row nodestate.NetRow
	// hist is, for the latest versions, the peers each one changed or
	// dropped (oldest first, at most histLen): what a delta from an
	// earlier version must carry.
	hist []change
	// sent is, per server, what it was last sent and when.
	sent map[string]sendState
	// sentBytes counts the encoded rows sent to other nodes.
	sentBytes atomic.Uint64
	sends     atomic.Uint64
}

// histLen bounds the versions a delta can span; a server further behind
// gets the whole row.
const histLen = 64

// change is the peers one version of the row changed or dropped.
type change struct {
	v     uint64
	peers []string
}

// sendState is what the sender knows of one server's copy of its row.
type sendState struct {
	boot  int64     // the server's boot when last sent to
	v     uint64    // the row version last delivered
	at    time.Time // when it was last delivered
	retry time.Time // no attempt before this after a failure
	fails int
}

// NewSender builds a sender; Run runs it.
func NewSender(d Deps) *Sender {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Sender{d: d, cfg: d.Config.OrDefault(), wake: make(chan struct{}, 1),
		row: nodestate.NetRow{Node: d.Node, Boot: d.Boot}, sent: map[string]sendState{}}
}

// Set replaces this node's row; a different row is a new version, sent
// to the servers within MinInterval.
func (s *Sender) Set(cells []nodestate.NetEntry) {
	s.mu.Lock()
	changed := s.row.V == 0 || !slices.Equal(cells, s.row.Cells)
	if changed {
		c := change{v: s.row.V + 1, peers: diffPeers(s.row.Cells, cells)}
		s.row.Cells, s.row.V = slices.Clone(cells), c.v
		s.hist = append(s.hist, c)
		if len(s.hist) > histLen {
			s.hist = slices.Delete(s.hist, 0, len(s.hist)-histLen)
		}
	}
	s.mu.Unlock()
	if changed {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// Row returns a copy of this node's row (V 0: none published yet).
func (s *Sender) Row() nodestate.NetRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.row)
}

// SentBytes is the bytes of rows sent to other nodes so far, and Sends
// how many sends that took.
func (s *Sender) SentBytes() uint64 { return s.sentBytes.Load() }

// Sends is the number of rows delivered to other nodes so far.
func (s *Sender) Sends() uint64 { return s.sends.Load() }

// Run sends until ctx ends: every MinInterval it sends to each server
// that is due (see due), and sooner after Set.
func (s *Sender) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.MinInterval)
	defer t.Stop()
	for {
		s.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// round sends the row to every server due now, concurrently, and waits:
// a delta to a server that holds an earlier version of this boot (see
// message), the whole row to any other.
func (s *Sender) round(ctx context.Context) {
	now := s.d.Now()
	servers := s.d.Servers()
	s.mu.Lock()
	row := clone(s.row)
	listed := map[string]bool{}
	bodies := map[uint64][]byte{} // by the base version of the message
	type send struct {
		srv  Server
		body []byte
	}
	var due []send
	for _, srv := range servers {
		listed[srv.Name] = true
		st, ok := s.sent[srv.Name]
		if row.V == 0 || !isDue(st, ok, srv, row.V, now, s.cfg) {
			continue
		}
		base := uint64(0)
		if ok && st.boot == srv.Boot && st.v != 0 && st.v != row.V {
			base = st.v
		}
		body, have := bodies[base]
		if !have {
			var err error
			if body, err = nodestate.EncodeNetRow(s.message(row, base)); err != nil {
				s.mu.Unlock()
				s.d.Log.Error("encode own network row", "err", err)
				return
			}
			bodies[base] = body
		}
		due = append(due, send{srv, body})
	}
	for name := range s.sent {
		if !listed[name] {
			delete(s.sent, name) // no longer a server: start afresh if it becomes one again
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, d := range due {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
			err := s.d.Send(sctx, d.srv.Name, d.body)
			cancel()
			s.record(d.srv, row.V, len(d.body), err)
		}()
	}
	wg.Wait()
}

// message is what a server holding version base of row (0: none) is
// sent: a delta of the peers changed since base when the history reaches
// back that far and the delta is smaller than the row, else the row.
// s.mu is held.
func (s *Sender) message(row nodestate.NetRow, base uint64) *nodestate.NetRow {
	if base == 0 || len(s.hist) == 0 || s.hist[0].v > base+1 {
		return &row
	}
	peers := map[string]bool{}
	for _, c := range s.hist {
		if c.v > base {
			for _, p := range c.peers {
				peers[p] = true
			}
		}
	}
	if 2*len(peers) > len(row.Cells) {
		return &row
	}
	d := nodestate.NetRow{Node: row.Node, Boot: row.Boot, V: row.V, Base: base, Cells: []nodestate.NetEntry{}}
	for _, c := range row.Cells {
		if peers[c.Peer] {
			d.Cells = append(d.Cells, c)
			delete(peers, c.Peer)
		}
	}
	for p := range peers {
		d.Gone = append(d.Gone, p) // changed since base, and no longer in the row
	}
	slices.Sort(d.Gone)
	return &d
}

// diffPeers lists the peers whose cell differs between two rows, dropped
// ones included.
func diffPeers(old, cur []nodestate.NetEntry) []string {
	was := make(map[string]nodestate.NetEntry, len(old))
	for _, c := range old {
		was[c.Peer] = c
	}
	var out []string
	for _, c := range cur {
		if o, ok := was[c.Peer]; !ok || o != c {
			out = append(out, c.Peer)
		}
		delete(was, c.Peer)
	}
	for p := range was {
		out = append(out, p)
	}
	return out
}

// record notes the outcome of one send.
func (s *Sender) record(srv Server, v uint64, n int, err error) {
	now := s.d.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sent[srv.Name]
	if err != nil {
		// The next try sends the whole row: the server may have refused a
		// delta (rows.ErrNeedFull) or lost what it held.
		st.fails++
		st.retry, st.v = now.Add(backoff(st.fails, s.cfg)), 0
		s.sent[srv.Name] = st
		s.d.Log.Warn("network row not delivered to a server", "server", srv.Name, "err", err, "retry_in", backoff(st.fails, s.cfg))
		return
	}
	s.sent[srv.Name] = sendState{boot: srv.Boot, v: v, at: now}
	if srv.Name != s.d.Node {
		s.sentBytes.Add(uint64(n))
		s.sends.Add(1)
	}
}

// isDue says whether a server gets the row of version v now: a server
// never sent to (ok false) or restarted since is due at once, a changed
// row MinInterval after the last send, an unchanged one after Refresh;
// never before the retry time of a failed send.
func isDue(st sendState, ok bool, srv Server, v uint64, now time.Time, c Config) bool {
	switch {
	case now.Before(st.retry):
		return false
	case !ok || st.at.IsZero() || st.boot != srv.Boot:
		return true
	case st.v != v:
		return now.Sub(st.at) >= c.MinInterval
	default:
		return now.Sub(st.at) >= c.Refresh
	}
}

// backoff after the n-th failure in a row: doubling from MinInterval, at
// most Refresh.
func backoff(n int, c Config) time.Duration {
	d := c.MinInterval
	for i := 1; i < n && d < c.Refresh; i++ {
		d *= 2
	}
	return min(d, c.Refresh)
}
