package raftnode

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/tlsca"
)

// testStream is a stream layer on ln (nil: dial only) with the CA derived
// from token and a leaf issued from it, as an agent holding token has.
func testStream(t *testing.T, ln net.Listener, token string) *tlsStream {
	t.Helper()
	ca, err := tlsca.DeriveCA(token)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := tlsca.IssuedLeaf(ca, tlsca.AgentRequest("n", "", tlsca.DefaultLeafTTL), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var adv net.Addr
	if ln != nil {
		adv = ln.Addr()
	}
	return newTLSStream(ln, adv, tlsca.Pool(ca.Cert), leaf)
}

// TestTLSStream: raft connections need a certificate of the cluster's CA;
// a process without one (no certificate, another cluster's, or plain TCP
// bytes) gets no raft byte through.
func TestTLSStream(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := testStream(t, ln, "the-right-cluster-token")
	defer srv.Close()
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c) // echo: only reachable after the handshake
		}
	}()
	addr := ln.Addr().String()

	good := testStream(t, nil, "the-right-cluster-token")
	c, err := good.Dial(raft.ServerAddress(addr), time.Second)
	if err != nil {
		t.Fatalf("holder of the cluster's CA refused: %v", err)
	}
	c.Write([]byte("ping"))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo after handshake = %q, %v", buf, err)
	}
	c.Close()

	// Another cluster: its client certificate is refused, and it refuses
	// our server's certificate too.
	bad := testStream(t, nil, "a-wrong-cluster-token!!")
	if c, err := bad.Dial(raft.ServerAddress(addr), time.Second); err == nil {
		c.Close()
		t.Fatal("a dialer of another cluster got through")
	}
	// A stranger who trusts our CA (it is public) but has no certificate.
	ca, _ := tlsca.DeriveCA("the-right-cluster-token")
	anon, err := tls.Dial("tcp", addr, tlsca.ClientConfig(tlsca.Pool(ca.Cert), nil, tlsca.AgentServerName))
	if err == nil {
		anon.Write([]byte("ping"))
		anon.SetReadDeadline(time.Now().Add(2 * time.Second))
		if n, _ := io.ReadFull(anon, buf); n > 0 {
			t.Fatal("a client without a certificate got raft bytes back")
		}
		anon.Close()
	}
	// A stranger who skips TLS and writes raft bytes gets nothing back.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write(make([]byte, 40+32))
	raw.SetReadDeadline(time.Now().Add(2 * time.Second))
	if got, _ := io.ReadAll(raw); bytes.Contains(got, make([]byte, 40+32)) {
		t.Fatal("stranger's bytes were echoed")
	}
}

// TestDiskTransportReplicatesWithoutAPipeline: raft's pipeline at its
// default depth can leave a leader's replication waiting forever on a
// follower that failed an append, and Shutdown with it; the agent's
// transport answers that it does not pipeline, so raft replicates one
// request at a time.
func TestDiskTransportReplicatesWithoutAPipeline(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsca.DeriveCA("a-cluster-token-of-this-test")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := tlsca.IssuedLeaf(ca, tlsca.AgentRequest("n", "", tlsca.DefaultLeafTTL), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := Disk{Dir: t.TempDir()}.Open(Config{ID: "n", Listener: ln, Advertise: ln.Addr(), Roots: tlsca.Pool(ca.Cert), Leaf: leaf}, raftLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parts.CloseTransport(); _ = parts.CloseStore() })
	if _, err := parts.Transport.AppendEntriesPipeline("m", "127.0.0.1:1"); !errors.Is(err, raft.ErrPipelineReplicationNotSupported) {
		t.Fatalf("the transport's pipeline: %v, want %v", err, raft.ErrPipelineReplicationNotSupported)
	}
}
