package agent

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// loops are the agent's goroutines: its long-running loops and the short
// background work of handlers. Shutdown cancels their context and waits
// for all of them.
type loops struct {
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// mu guards stopping, set once wait has begun to wait on wg.
	mu       sync.Mutex
	stopping bool
}

func newLoops(log *slog.Logger) *loops {
	l := &loops{log: log}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// run runs fn in a goroutine until the agent stops (fn must return when
// its ctx ends).
func (l *loops) run(name string, fn func(ctx context.Context)) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		fn(l.ctx)
		l.log.Debug("loop stopped", "loop", name)
	}()
}

// every runs f every period until the agent stops.
func (l *loops) every(name string, period time.Duration, f func()) {
	l.run(name, func(ctx context.Context) {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				f()
			}
		}
	})
}

// background runs f in a goroutine that Shutdown waits for, unless the
// agent is stopping (then it reports false and runs nothing): a WaitGroup
// must not gain work once Shutdown has begun to wait on it, and a handler
// outlives the HTTP server's shutdown grace.
func (l *loops) background(f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopping {
		return false
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f()
	}()
	return true
}

// wait refuses new background work and waits for every goroutine; cancel
// first, or the loops never end.
func (l *loops) wait() {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	l.wg.Wait()
}
