package replica

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Follower is the client side: it keeps cfg.FSM a copy of a server's.
type Follower struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	server string

	ready     chan struct{}
	readyOnce sync.Once

	entries, snapshots, connects atomic.Uint64
}

// Stats counts what a follower did since Start.
type Stats struct {
	// Entries and Snapshots applied; Connects: streams opened.
	Entries, Snapshots, Connects uint64
}

// Start validates cfg (zero timings take DefaultConfig's) and starts
// following in the background until ctx ends or Stop. It does not wait for
// a server: Ready says when the copy first caught up.
func Start(ctx context.Context, cfg Config) (*Follower, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Follower{cfg: cfg, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	go f.run(ctx)
	return f, nil
}

// Index is the raft index of the last entry the copy holds.
func (f *Follower) Index() uint64 { return f.cfg.FSM.Index() }

// Server is the server being followed now, "" between streams.
func (f *Follower) Server() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.server
}

// Ready is closed once the copy has caught up with a server (reached the
// index the server's first heartbeat announced).
func (f *Follower) Ready() <-chan struct{} { return f.ready }

// Stats returns the follower's counters.
func (f *Follower) Stats() Stats {
	return Stats{Entries: f.entries.Load(), Snapshots: f.snapshots.Load(), Connects: f.connects.Load()}
}

// Stop ends the stream and waits for the follower to finish.
func (f *Follower) Stop() {
	f.cancel()
	<-f.done
}

func (f *Follower) setServer(s string) {
	f.mu.Lock()
	f.server = s
	f.mu.Unlock()
}

// run follows one server after another until ctx ends.
func (f *Follower) run(ctx context.Context) {
	defer close(f.done)
	pick := f.cfg.Pick
	if pick == nil {
		pick = rand.IntN
	}
	backoff, turn := f.cfg.MinBackoff, -1
	for ctx.Err() == nil {
		servers := f.cfg.Servers()
		if len(servers) == 0 {
			f.cfg.Log.Warn("replica: no server to follow", "retry_in", backoff)
		} else {
			if turn < 0 {
				turn = pick(len(servers))
			} else {
				turn++
			}
			server := servers[turn%len(servers)]
			progressed, err := f.follow(ctx, server)
			if ctx.Err() != nil {
				return
			}
			if progressed {
				backoff = f.cfg.MinBackoff
			}
			f.cfg.Log.Warn("replica: stream ended", "server", server, "index", f.Index(), "err", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-f.cfg.After(backoff):
		}
		backoff = min(2*backoff, f.cfg.MaxBackoff)
	}
}

// follow applies one server's stream until it fails; progressed says
// whether it delivered any frame.
func (f *Follower) follow(ctx context.Context, server string) (progressed bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := f.cfg.Open(ctx, server, f.Index())
	if err != nil {
		return false, fmt.Errorf("open stream of %s: %w", server, err)
	}
	defer rc.Close()
	f.connects.Add(1)
	f.setServer(server)
	defer f.setServer("")
	f.cfg.Log.Info("replica: following", "server", server, "after", f.Index())

	// The watchdog ends a stream that went silent: a dead server whose
	// connection is not closed sends neither frames nor heartbeats.
	var heard atomic.Int64
	heard.Store(f.cfg.Now().UnixNano())
	var silent atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-f.cfg.After(f.cfg.Silence / 4):
			}
			if f.cfg.Now().UnixNano()-heard.Load() > int64(f.cfg.Silence) {
				silent.Store(true)
				cancel()
				return
			}
		}
	}()
	defer wg.Wait()
	defer cancel()

	br := bufio.NewReaderSize(rc, 64<<10)
	for {
		fr, err := ReadFrame(br)
		if err != nil {
			switch {
			case silent.Load():
				return progressed, fmt.Errorf("%s: %w for %v", server, ErrSilent, f.cfg.Silence)
			case errors.Is(err, io.EOF):
				return progressed, fmt.Errorf("%s closed the stream", server)
			}
			return progressed, fmt.Errorf("stream of %s: %w", server, err)
		}
		heard.Store(f.cfg.Now().UnixNano())
		progressed = true
		if err := f.apply(fr); err != nil {
			return progressed, fmt.Errorf("stream of %s: %w", server, err)
		}
	}
}

// apply applies one frame to the FSM.
func (f *Follower) apply(fr Frame) error {
	switch fr.Kind {
	case KindSnapshot:
		if err := f.cfg.FSM.Restore(io.NopCloser(bytes.NewReader(fr.Data))); err != nil {
			return fmt.Errorf("snapshot at %d: %w", fr.Index, err)
		}
		f.snapshots.Add(1)
		f.wake()
	case KindEntry:
		if at := f.cfg.FSM.Index(); fr.Index <= at {
			return fmt.Errorf("%w: entry %d, the copy is at %d", ErrOutOfOrder, fr.Index, at)
		}
		// A refused command is applied too (it moves the index), exactly as
		// on the servers: the FSM is deterministic.
		f.cfg.FSM.Apply(&raft.Log{Index: fr.Index, Term: fr.Term, Type: raft.LogCommand, Data: fr.Data})
		f.entries.Add(1)
		f.wake()
	case KindHeartbeat:
		if f.cfg.FSM.Index() >= fr.Index {
			f.readyOnce.Do(func() { close(f.ready) })
		}
	default:
		return fmt.Errorf("%w: %v", ErrBadFrame, fr.Kind)
	}
	return nil
}

// wake signals the Wake channels, dropping a signal a full channel
// already carries (the readers are level-triggered).
func (f *Follower) wake() {
	for _, ch := range f.cfg.Wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
