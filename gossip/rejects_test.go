package gossip

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// lockedBuffer collects a node's log while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStrangerGarbageDoesNotFloodTheLog is a stranger's flood of garbage
// at the gossip port: every packet fails to decrypt and used to cost an
// ERROR line, so whoever reaches the port could fill the disk and bury
// every other line. They must be counted, and logged at most once a
// minute.
func TestStrangerGarbageDoesNotFloodTheLog(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	cfg := TestConfig()
	cfg.Name, cfg.Key = "target", testKey
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	g, err := New(cfg, nodestate.NodeState{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown()
	host, port := g.LocalAddr()
	conn, err := net.Dial("udp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const batches, per = 10, 30
	sent := uint64(0)
	for range batches {
		for range per {
			garbage := make([]byte, 120)
			rand.Read(garbage)
			garbage[0] = 1 // an encryption version memberlist knows: the packet reaches decryption
			if _, err := conn.Write(garbage); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		waitFor(t, 10*time.Second, fmt.Sprintf("%d garbage packets counted", sent), func() bool {
			p, _ := g.Undecryptable()
			return p >= sent
		})
	}
	if p, s := g.Undecryptable(); p != sent || s != 0 {
		t.Errorf("counted %d packets and %d streams that failed to decrypt, want %d and 0", p, s, sent)
	}
	lines := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(strings.ToLower(l), "decrypt") {
			lines++
		}
	}
	if lines > 1 {
		t.Errorf("%d garbage packets made %d log lines, want at most one a minute", sent, lines)
	}
}

// TestRejectsLogOncePerInterval: the first rejected message is logged at
// once, the next ones only when the interval has passed, with their count.
func TestRejectsLogOncePerInterval(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	now := time.Unix(1000, 0)
	r := newRejects(slog.New(slog.NewTextHandler(&logs, nil)))
	r.now = func() time.Time { return now }
	r.add("Decrypt packet failed: x from=1.2.3.4:5", true)
	for range 9 {
		now = now.Add(time.Second)
		r.add("failed to receive: No installed keys could decrypt the message from=1.2.3.4:6", false)
	}
	now = now.Add(rejectLogEvery)
	r.add("Decrypt packet failed: y from=1.2.3.4:7", true)
	got := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(got) != 2 || !strings.Contains(got[0], "count=1 ") || !strings.Contains(got[1], "count=10 ") || !strings.Contains(got[1], "1.2.3.4:7") {
		t.Errorf("log lines:\n%s\nwant two: count=1, then count=10 with the last message", logs.String())
	}
	if p, s := r.packets.Load(), r.streams.Load(); p != 2 || s != 9 {
		t.Errorf("counted %d packets, %d streams; want 2 and 9", p, s)
	}
}
