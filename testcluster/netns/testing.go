package netns

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// SkipMessage begins the one line with which [UpForTest] skips a test on a
// host that cannot run a testbed.
const SkipMessage = "netns testbed: needs root and iproute2: "

// SkipIfUnavailable skips t with one clear line unless [Available].
func SkipIfUnavailable(t testing.TB) {
	t.Helper()
	if ok, why := Available(); !ok {
		t.Skip(SkipMessage + why)
	}
}

// UpForTest brings topo up for a test: it skips t when the host cannot run
// a testbed, fails t if Up fails, logs to t (unless opts.Logger is set),
// keeps process logs in t.TempDir() (unless opts.Dir is set) and closes the
// testbed in t.Cleanup, failing t if teardown fails.
func UpForTest(t testing.TB, topo Topology, opts Options) *Testbed {
	t.Helper()
	SkipIfUnavailable(t)
	if opts.Logger == nil {
		opts.Logger = UpForTestLogger(t)
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	tb, err := Up(t.Context(), topo, opts)
	if err != nil {
		t.Fatalf("netns testbed up: %v", err)
	}
	t.Cleanup(func() {
		if err := tb.Close(); err != nil {
			t.Errorf("netns testbed close: %v", err)
		}
	})
	return tb
}

// UpForTestLogger returns a logger that writes to t.Log at debug level.
func UpForTestLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(&testWriter{t: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testWriter sends each log line to t.Log; lines written after the test
// has finished (a signal handler's teardown) are dropped.
type testWriter struct {
	mu sync.Mutex
	t  testing.TB
}

func (w *testWriter) Write(p []byte) (n int, err error) {
	n = len(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { _ = recover() }()
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return n, nil
}
