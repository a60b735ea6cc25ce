package testcluster

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// tlogHandler routes an agent's records to t.Log, prefixed with the node's
// name, and goes quiet once the test has finished (memberlist goroutines
// can outlive Shutdown by a few milliseconds, and t.Log after the end panics).
type tlogHandler struct {
	t     testing.TB
	level slog.Level
	done  *atomic.Bool
	attrs []slog.Attr
	mu    *sync.Mutex
}

func newTLogHandler(t testing.TB, level slog.Level) (*tlogHandler, func()) {
	h := &tlogHandler{t: t, level: level, done: &atomic.Bool{}, mu: &sync.Mutex{}}
	return h, func() { h.done.Store(true) }
}

func (h *tlogHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *tlogHandler) Handle(_ context.Context, r slog.Record) error {
	if h.done.Load() {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.done.Load() {
		h.t.Log(b.String())
	}
	return nil
}

func (h *tlogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *tlogHandler) WithGroup(string) slog.Handler { return h }
