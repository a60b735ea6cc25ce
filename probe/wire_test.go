package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/tlsca"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestServer_BandwidthAndEcho(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 2 * time.Second,
		OnTest: func(from string, r BandwidthResult) { got <- from }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	r, err := BandwidthTest(context.Background(), addr, testKey, "n1", 1<<20, 2*time.Second)
	if err != nil || r.Bytes != 1<<20 || r.Mbps() <= 0 {
		t.Fatalf("test: %+v %v", r, err)
	}
	if from := <-got; from != "n1" {
		t.Fatalf("server saw %q", from)
	}
	if _, err := BandwidthTest(context.Background(), addr, testKey, "n1", 2<<20, time.Second); !errors.Is(err, ErrPeerRefused) {
		t.Fatalf("oversized test: %v", err)
	}
	if _, err := BandwidthTest(context.Background(), addr, []byte("another-cluster-key-0123456789ab"), "x", 1<<16, time.Second); err == nil {
		t.Fatal("a stranger's test was accepted")
	}
	p, err := NewPinger(testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if rtts, err := p.Ping(addr, 3, time.Second); err != nil || len(rtts) != 3 {
		t.Fatalf("ping: %v %v", rtts, err)
	}
	q, _ := NewPinger([]byte("another-cluster-key-0123456789ab"))
	defer q.Close()
	if _, err := q.Ping(addr, 1, 200*time.Millisecond); err == nil {
		t.Fatal("a stranger's ping was answered")
	}
}

func FuzzParseProbeMessages(f *testing.F) {
	req, _ := bwRequest{Bytes: 1 << 20, At: 1, From: "n1"}.marshal(testKey)
	f.Add(req)
	f.Add(echoPacket{Seq: 1, Sent: 2}.marshal(testKey))
	f.Add(bwResult{Received: 1}.marshal(testKey, [16]byte{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := parseEcho(testKey, b); err == nil {
			if q, _ := parseEcho(testKey, p.marshal(testKey)); q != p {
				t.Fatalf("echo round trip: %+v %+v", p, q)
			}
		}
		if r, err := parseBWRequest(testKey, b); err == nil {
			if b2, _ := r.marshal(testKey); string(b2) != string(b) {
				t.Fatal("request round trip")
			}
		}
		_, _ = parseBWResult(testKey, [16]byte{}, b)
		_, _ = parseBWHeader(b)
	})
}

// TestServer_BandwidthOverTLS: with TLS the request (and its HMAC) is sent
// only to a server holding a certificate of the cluster's CA; a client of
// another cluster refuses the server, and a plain-TCP client gets nothing.
func TestServer_BandwidthOverTLS(t *testing.T) {
	t.Parallel()
	ca, _ := tlsca.DeriveCA("probe-test-token-0123456789")
	leaf, err := tlsca.IssuedLeaf(ca, tlsca.AgentRequest("srv", "", time.Hour), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 2 * time.Second,
		TLS: tlsca.ServerConfig(tlsca.Pool(ca.Cert), leaf, tls.NoClientCert)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	ok := tlsca.ClientConfig(tlsca.Pool(ca.Cert), nil, tlsca.AgentServerName)
	if r, err := BandwidthTestTLS(context.Background(), addr, testKey, "n1", 1<<20, 2*time.Second, ok); err != nil || r.Bytes != 1<<20 {
		t.Fatalf("test over TLS: %+v %v", r, err)
	}
	// The server frees its slot just after it answered the last test.
	for deadline := time.Now().Add(10 * time.Second); ; {
		r, err := BandwidthTestBoth(context.Background(), addr, testKey, "n1", 1<<19, time.Second, ok, nil)
		if errors.Is(err, ErrPeerBusy) && time.Now().Before(deadline) {
			continue
		}
		if err != nil || r.RevBytes != 1<<19 {
			t.Fatalf("two-way test over TLS: %+v %v", r, err)
		}
		break
	}
	other, _ := tlsca.DeriveCA("another-cluster-token-0123456789")
	if _, err := BandwidthTestTLS(context.Background(), addr, testKey, "n1", 1<<16, time.Second,
		tlsca.ClientConfig(tlsca.Pool(other.Cert), nil, tlsca.AgentServerName)); err == nil {
		t.Fatal("a client of another cluster sent its request to this server")
	}
	if _, err := BandwidthTest(context.Background(), addr, testKey, "n1", 1<<16, time.Second); err == nil {
		t.Fatal("a plain-TCP test was answered by a TLS server")
	}
}

// TestServer_BothDirections: a version-2 test measures the reverse
// direction too, and both ends learn both rates (the server through the
// client's tagged account); a one-way request still gets one direction.
func TestServer_BothDirections(t *testing.T) {
	t.Parallel()
	got := make(chan BandwidthResult, 2)
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 4 * time.Second,
		OnTest: func(_ string, r BandwidthResult) { got <- r }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	r, err := BandwidthTestBoth(context.Background(), addr, testKey, "n1", 1<<20, 2*time.Second, nil, nil)
	if err != nil || r.Bytes != 1<<20 || r.RevBytes != 1<<20 || r.Mbps() <= 0 || r.RevMbps() <= 0 {
		t.Fatalf("two-way test: %+v %v", r, err)
	}
	if sr := <-got; sr.Bytes != 1<<20 || sr.RevBytes != 1<<20 || sr.RevElapsed != r.RevElapsed {
		t.Fatalf("server's record %+v, client's %+v", sr, r)
	}
	for deadline := time.Now().Add(10 * time.Second); ; { // the slot frees just after OnTest
		r, err = BandwidthTest(context.Background(), addr, testKey, "n1", 1<<18, 2*time.Second)
		if !errors.Is(err, ErrPeerBusy) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || r.Bytes != 1<<18 || r.RevBytes != 0 {
		t.Fatalf("one-way test: %+v %v", r, err)
	}
	if sr := <-got; sr.RevBytes != 0 {
		t.Fatalf("one-way test recorded a reverse: %+v", sr)
	}
}

// TestServer_CarriedBothEnds: with counters, each end reports for each
// half what its link carried that way: the client's forward half reads
// what it sent and its reverse half what it received, the server the
// other way round. Over loopback the counters are a stand-in (the real
// interfaces' counters are tested on namespaces, agent's
// TestProbes_CarriedUnderAFlow): each reading adds 1 GB in one direction
// only, so the halves that read that direction saw far more than their
// payload besides them and the others nothing.
func TestServer_CarriedBothEnds(t *testing.T) {
	t.Parallel()
	oneWay := func(rx bool) CounterSource {
		return func(net.Addr) Counters {
			var n uint64
			return func() (uint64, uint64, error) {
				n += 1 << 30
				if rx {
					return n, 0, nil
				}
				return 0, n, nil
			}
		}
	}
	for _, c := range []struct {
		name                 string
		client, server       CounterSource
		clientFwd, clientRev bool // which halves see the traffic besides
		serverFwd, serverRev bool
	}{
		{"busy sending client, busy receiving server", oneWay(false), oneWay(true), true, false, true, false},
		{"busy receiving client, busy sending server", oneWay(true), oneWay(false), false, true, false, true},
	} {
		got := make(chan BandwidthResult, 1)
		s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 4 * time.Second,
			OnTest: func(_ string, r BandwidthResult) { got <- r }, Counters: c.server})
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
		r, err := BandwidthTestBoth(context.Background(), addr, testKey, "n1", 1<<20, 2*time.Second, nil, c.client)
		if err != nil {
			t.Fatal(err)
		}
		sr := <-got
		s.Close()
		for _, h := range []struct {
			half          string
			carried, rate float64
			busy          bool
		}{{"client, forward", r.Carried, r.Mbps(), c.clientFwd}, {"client, reverse", r.RevCarried, r.RevMbps(), c.clientRev},
			{"server, forward", sr.Carried, sr.Mbps(), c.serverFwd}, {"server, reverse", sr.RevCarried, sr.RevMbps(), c.serverRev}} {
			if !(h.rate > 0) || h.busy != (h.carried > h.rate) || h.carried < h.rate {
				t.Errorf("%s: %s: carried %v at rate %v; want above the rate: %v, else equal", c.name, h.half, h.carried, h.rate, h.busy)
			}
		}
	}
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := BandwidthTestBoth(context.Background(), net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())), testKey, "n1", 1<<18, 2*time.Second, nil, nil)
	if err != nil || r.Carried != 0 || r.RevCarried != 0 {
		t.Fatalf("client without counters: %+v %v; want carried 0 both ways", r, err)
	}
}

// TestServer_Check: a link check (version 3) is a two-way test that both
// ends report with Check set, so neither takes it for the pair's
// bandwidth test; a version-2 test is not a check.
func TestServer_Check(t *testing.T) {
	t.Parallel()
	got := make(chan BandwidthResult, 2)
	s, err := Listen("127.0.0.1", 0, ServerConfig{Key: testKey, MaxBytes: 1 << 20, Timeout: 4 * time.Second,
		OnTest: func(_ string, r BandwidthResult) { got <- r }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	r, err := BandwidthCheck(context.Background(), addr, testKey, "n1", 1<<18, 2*time.Second, nil, nil)
	if err != nil || !r.Check || r.Bytes != 1<<18 || r.RevBytes != 1<<18 {
		t.Fatalf("check: %+v %v", r, err)
	}
	if sr := <-got; !sr.Check || sr.RevBytes != 1<<18 {
		t.Fatalf("server's record of a check: %+v", sr)
	}
	for deadline := time.Now().Add(10 * time.Second); ; { // the slot frees just after OnTest
		r, err = BandwidthTestBoth(context.Background(), addr, testKey, "n1", 1<<18, 2*time.Second, nil, nil)
		if !errors.Is(err, ErrPeerBusy) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || r.Check {
		t.Fatalf("two-way test: %+v %v", r, err)
	}
	if sr := <-got; sr.Check {
		t.Fatalf("server took a two-way test for a check: %+v", sr)
	}
}
