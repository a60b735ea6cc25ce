package rows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
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

// Validate names the first setting out of bounds.
func (c Config) Validate() error {
	switch {
	case c.MinInterval < 0 || c.Refresh < 0 || c.SendTimeout < 0:
		return errors.New("network row intervals must not be negative")
	case c.Refresh > 0 && c.MinInterval > c.Refresh:
		return fmt.Errorf("network row min interval %v exceeds the refresh %v", c.MinInterval, c.Refresh)
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
	row gossip.NetRow
	// sent is, per server, what it was last sent and when.
	sent map[string]sendState
	// sentBytes counts the encoded rows sent to other nodes.
	sentBytes atomic.Uint64
	sends     atomic.Uint64
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
		row: gossip.NetRow{Node: d.Node, Boot: d.Boot}, sent: map[string]sendState{}}
}

// Set replaces this node's row; a different row is a new version, sent
// to the servers within MinInterval.
func (s *Sender) Set(cells []gossip.NetEntry) {
	s.mu.Lock()
	changed := s.row.V == 0 || !slices.Equal(cells, s.row.Cells)
	if changed {
		s.row.Cells, s.row.V = slices.Clone(cells), s.row.V+1
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
func (s *Sender) Row() gossip.NetRow {
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

// round sends the row to every server due now, concurrently, and waits.
func (s *Sender) round(ctx context.Context) {
	now := s.d.Now()
	servers := s.d.Servers()
	s.mu.Lock()
	row := clone(s.row)
	listed := map[string]bool{}
	var due []Server
	for _, srv := range servers {
		listed[srv.Name] = true
		if st, ok := s.sent[srv.Name]; row.V > 0 && isDue(st, ok, srv, row.V, now, s.cfg) {
			due = append(due, srv)
		}
	}
	for name := range s.sent {
		if !listed[name] {
			delete(s.sent, name) // no longer a server: start afresh if it becomes one again
		}
	}
	s.mu.Unlock()
	if len(due) == 0 {
		return
	}
	body, err := gossip.EncodeNetRow(&row)
	if err != nil {
		s.d.Log.Error("encode own network row", "err", err)
		return
	}
	var wg sync.WaitGroup
	for _, srv := range due {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
			err := s.d.Send(sctx, srv.Name, body)
			cancel()
			s.record(srv, row.V, len(body), err)
		}()
	}
	wg.Wait()
}

// record notes the outcome of one send.
func (s *Sender) record(srv Server, v uint64, n int, err error) {
	now := s.d.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sent[srv.Name]
	if err != nil {
		st.fails++
		st.retry = now.Add(backoff(st.fails, s.cfg))
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
