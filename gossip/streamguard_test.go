package gossip

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// strangerConn dials addr from src (a loopback address of its own, so the
// per-source cap tells it from the members on 127.0.0.1).
func strangerConn(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	return c
}

// encryptedHeader is what a stream claiming an n-byte ciphertext opens with.
func encryptedHeader(n uint32) []byte {
	h := []byte{encryptedStreamType, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[1:], n)
	return h
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestGossipKeylessStreamsCannotExhaustMemory: 40
// strangers without the key each claim a ciphertext just under memberlist's
// 20 MiB limit and send 2 MiB of it. Unguarded, memberlist buffers all of
// it (and would buffer 20 MiB each) and keeps every stream open until its
// TCP timeout; guarded, each is closed after its five-byte header and the
// heap stays put, while two members still join and gossip.
func TestGossipKeylessStreamsCannotExhaustMemory(t *testing.T) {
	// Not parallel: the heap is measured.
	const strangers, sent = 40, 2 << 20
	a := startNode(t, "mem0", 0, testKey, 0)
	defer a.Shutdown()
	host, port := a.LocalAddr()
	addr := net.JoinHostPort(host, fmt.Sprint(port))
	before := heapInUse()

	conns := make([]net.Conn, strangers)
	for i := range conns {
		conns[i] = strangerConn(t, "127.0.0.2", addr)
		defer conns[i].Close()
	}
	payload := make([]byte, sent)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write(encryptedHeader(20<<20 - 1)); err != nil {
				return
			}
			_, _ = c.Write(payload) // refused streams fail here: fine
		}()
	}
	wg.Wait()

	// A member joins while the strangers hold on.
	b := startNode(t, "mem1", 0, testKey, 0)
	defer b.Shutdown()
	if err := b.Join(t.Context(), []string{addr}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "mem0 and mem1 to hold each other's state", func() bool {
		ea, _ := a.Node("mem1")
		eb, _ := b.Node("mem0")
		return ea.HasState && eb.HasState
	})
	grown := int64(heapInUse()) - int64(before)
	t.Logf("heap grew by %.1f MiB with %d strangers holding streams (%d MiB sent each)", float64(grown)/(1<<20), strangers, sent>>20)

	// Every stranger's stream is closed well before memberlist's own
	// 10-second TCP timeout would close it.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil && isTimeout(err) {
			t.Fatalf("stranger %d: stream still open 3s after it claimed 20 MiB", i)
		}
	}
	if grown > 16<<20 {
		t.Fatalf("heap grew by %d MiB for %d keyless streams; want under 16", grown>>20, strangers)
	}
	if open, pending := a.guard.slots.usage(); open > 1 || pending != 0 {
		t.Fatalf("after the strangers were refused: %d streams open, %d bytes booked", open, pending)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestGossipStreamSlotsPerSource: a stranger who opens streams and sends
// nothing holds at most MaxStreamsPerSource of them; the rest are closed
// at once, and members from another address still join.
func TestGossipStreamSlotsPerSource(t *testing.T) {
	t.Parallel()
	cfg := TestConfig()
	cfg.Name, cfg.Key = "slot0", testKey
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.MaxStreamsPerSource = 4
	a, err := New(cfg, nodestate.NodeState{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	host, port := a.LocalAddr()
	addr := net.JoinHostPort(host, fmt.Sprint(port))
	var conns []net.Conn
	for range 12 {
		c := strangerConn(t, "127.0.0.3", addr)
		defer c.Close()
		conns = append(conns, c)
	}
	// Exactly MaxStreamsPerSource stay open (memberlist would keep them
	// for its 10s TCP timeout): the others read EOF at once.
	var closed atomic.Int32
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
			if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
				closed.Add(1)
			}
		}()
	}
	wg.Wait()
	if closed := closed.Load(); closed != 8 {
		t.Fatalf("%d of 12 idle streams from one source closed at once, want 8", closed)
	}
	b := startNode(t, "slot1", 0, testKey, 0)
	defer b.Shutdown()
	if err := b.Join(t.Context(), []string{addr}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "slot1 to learn slot0's state", func() bool {
		e, _ := b.Node("slot0")
		return e.HasState
	})
}
