package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestNotifySystemd plays systemd's side of Type=notify: the agent says
// what it waits for, READY=1 only once it is ready, feeds the watchdog
// through its liveness check, and STOPPING=1 at the end.
func TestNotifySystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "30000") // 30 ms: a ping every 10 ms
	var isReady atomic.Bool
	var checks atomic.Int32
	ready := func() (bool, string) {
		if isReady.Load() {
			return true, "joined; state read"
		}
		return false, "joining the cluster"
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		notifySystemd(ctx, ready, func() { checks.Add(1) }, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	next := func(want string) []string {
		t.Helper()
		var seen []string
		buf := make([]byte, 4096)
		// One deadline for the whole wait: watchdog pings keep coming.
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("waiting for %q, got %d messages, the last %q: %v", want, len(seen), seen[max(0, len(seen)-3):], err)
			}
			msg := string(buf[:n])
			seen = append(seen, msg)
			if strings.HasPrefix(msg, want) {
				return seen
			}
		}
	}
	seen := next("STATUS=joining the cluster")
	seen = append(seen, next("WATCHDOG=1")...)
	for _, m := range seen {
		if strings.Contains(m, "READY=1") {
			t.Fatalf("READY=1 before the agent was ready: %q", seen)
		}
	}
	if checks.Load() == 0 {
		t.Fatal("WATCHDOG=1 sent without checking the agent")
	}
	isReady.Store(true)
	seen = next("READY=1")
	if last := seen[len(seen)-1]; last != "READY=1\nSTATUS=joined; state read" {
		t.Fatalf("readiness %q, want READY=1 with the status", last)
	}
	next("WATCHDOG=1") // the watchdog keeps being fed once ready
	cancel()
	next("STOPPING=1")
	<-done
}
