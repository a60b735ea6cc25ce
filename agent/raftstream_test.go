package agent

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestAuthStream(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newAuthStream(ln, ln.Addr(), "the-right-cluster-token")
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

	good := newAuthStream(nil, nil, "the-right-cluster-token")
	c, err := good.Dial(raft.ServerAddress(addr), time.Second)
	if err != nil {
		t.Fatalf("holder of the token refused: %v", err)
	}
	c.Write([]byte("ping"))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo after handshake = %q, %v", buf, err)
	}
	c.Close()

	bad := newAuthStream(nil, nil, "a-wrong-cluster-token!!")
	if _, err := bad.Dial(raft.ServerAddress(addr), time.Second); err == nil {
		t.Fatal("a dialer with the wrong token got through")
	}

	// A stranger who skips the handshake and writes raft bytes gets nothing back.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write(make([]byte, 40+32))
	raw.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, _ := io.ReadFull(raw, make([]byte, 64+8))
	if n == 64+8 {
		t.Fatal("stranger's bytes were echoed")
	}
}
