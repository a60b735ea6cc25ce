package probe

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestServer_KeylessConnectionsDoNotBlock: 20 strangers connect and send
// nothing. Without a share per source, 16 of them would take every slot and
// a member's test would be closed unanswered; one source holds at most
// MaxConnsPerSource and a member's test from another address goes through.
func TestServer_KeylessConnectionsDoNotBlock(t *testing.T) {
	t.Parallel()
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	for range 20 {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	r, err := BandwidthTest(context.Background(), addr, testKey, "n1", 1<<18, 2*time.Second)
	if err != nil || r.Bytes != 1<<18 {
		t.Fatalf("a member's test while 20 strangers hold connections: %+v %v", r, err)
	}
}

// TestServer_ReplayRefused: a captured request sent again within the
// clock-skew window is refused, and no second rate is recorded in the
// claimed sender's name.
func TestServer_ReplayRefused(t *testing.T) {
	t.Parallel()
	tests := make(chan string, 2)
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 2 * time.Second,
		OnTest: func(from string, _ BandwidthResult) { tests <- from }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	req := bwRequest{Bytes: 1 << 16, At: time.Now().UnixMilli(), From: "n1"}
	if _, err := rand.Read(req.Nonce[:]); err != nil {
		t.Fatal(err)
	}
	captured, err := req.marshal(testKey)
	if err != nil {
		t.Fatal(err)
	}
	send := func() byte {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(captured); err != nil {
			t.Fatal(err)
		}
		v := []byte{0}
		if _, err := io.ReadFull(c, v); err != nil {
			t.Fatalf("no verdict: %v", err)
		}
		if v[0] == verdictGo {
			_, _ = c.Write(make([]byte, req.Bytes))
			_, _ = io.ReadFull(c, make([]byte, bwResultLen))
		}
		return v[0]
	}
	if v := send(); v != verdictGo {
		t.Fatalf("the original request: verdict %d, want go", v)
	}
	select {
	case <-tests:
	case <-time.After(5 * time.Second):
		t.Fatal("the original test was not recorded")
	}
	if v := send(); v != verdictRefused {
		t.Fatalf("the replayed request: verdict %d, want refused", v)
	}
	if len(tests) != 0 {
		t.Fatal("the replayed request recorded a second rate")
	}
}

// SetLimits (a SIGHUP's new --bandwidth-bytes) takes effect for the next
// test: a size refused before is accepted after, and the reverse.
func TestServer_SetLimits(t *testing.T) {
	t.Parallel()
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 16, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	test := func() error {
		_, err := BandwidthTest(context.Background(), addr, testKey, "n1", 1<<18, 2*time.Second)
		return err
	}
	if err := test(); err == nil {
		t.Fatal("a 256 KiB test accepted by a server capped at 64 KiB")
	}
	s.SetLimits(1<<20, 0)
	if err := test(); err != nil {
		t.Fatalf("a 256 KiB test after raising the cap to 1 MiB: %v", err)
	}
	if got := s.limits.Load().timeout; got != 2*time.Second {
		t.Errorf("a zero timeout changed the timeout to %v", got)
	}
	s.SetLimits(1<<16, 0)
	if err := test(); err == nil {
		t.Fatal("a 256 KiB test accepted after lowering the cap to 64 KiB")
	}
}
