package gossip

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"io"

	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
)

// memberlist's message types that matter here (net.go of memberlist
// v0.6.0): a compressed payload, and the CRC header it may follow.
const (
	mlCompressMsg byte = 9
	mlHasCrcMsg   byte = 12
)

// countingTransport counts the packets it sends and how many of them are
// LZW-compressed payloads, decrypting them with key as memberlist
// encrypts a packet (security.go: a version byte, a 12-byte nonce, then
// AES-GCM; version 0 pads the plaintext). The stream guard refuses
// unencrypted gossip, so the test cannot read packets in the clear.
type countingTransport struct {
	memberlist.NodeAwareTransport
	gcm                 cipher.AEAD
	packets, compressed atomic.Int64
}

func (c *countingTransport) count(b []byte) {
	c.packets.Add(1)
	if len(b) < 1+12 {
		return
	}
	b, err := c.gcm.Open(nil, b[1:13], b[13:], nil)
	if err != nil {
		return
	}
	if len(b) > 5 && b[0] == mlHasCrcMsg {
		b = b[5:]
	}
	if len(b) > 0 && b[0] == mlCompressMsg {
		c.compressed.Add(1)
	}
}

func (c *countingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	c.count(b)
	return c.NodeAwareTransport.WriteTo(b, addr)
}

func (c *countingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	c.count(b)
	return c.NodeAwareTransport.WriteToAddress(b, a)
}

// TestCompressionSetting checks that Config.Compression decides what goes
// over the transport: with it on (the default, as agents have always
// gossiped) state broadcasts travel LZW-compressed, with it off no packet
// is, and nodes that differ in it still exchange states (a node reads
// compressed packets whatever its own setting).
func TestCompressionSetting(t *testing.T) {
	t.Parallel()
	if !DefaultConfig().Compression {
		t.Fatal("DefaultConfig has compression off; agents have always compressed gossip")
	}
	var network memberlist.MockNetwork
	names := []string{"c-on", "c-off"}
	ts := make([]*countingTransport, len(names))
	for i, name := range names {
		block, err := aes.NewCipher(testKey)
		if err != nil {
			t.Fatal(err)
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			t.Fatal(err)
		}
		ts[i] = &countingTransport{NodeAwareTransport: network.NewTransport(name), gcm: gcm}
	}
	var nodes []*Gossip
	defer func() { shutdownAll(nodes) }()
	for i, name := range names {
		cfg := TestConfig()
		cfg.Name, cfg.Key, cfg.Transport = name, testKey, ts[i]
		cfg.BindAddr, cfg.Port = "192.0.2.1", 1
		cfg.Compression = i == 0
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		g, err := New(cfg, sampleState())
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, g)
	}
	addr, port := nodes[0].LocalAddr()
	if err := nodes[1].Join(context.Background(), []string{fmt.Sprintf("%s:%d", addr, port)}); err != nil {
		t.Fatal(err)
	}
	for users := 1; users <= 3; users++ {
		for _, g := range nodes {
			g.Update(func(s *nodestate.NodeState) { s.Dyn.Users = users })
		}
		waitFor(t, 20*time.Second, fmt.Sprintf("users=%d on both nodes", users), func() bool {
			for _, g := range nodes {
				for _, name := range names {
					if e, ok := g.Lookup(name); !ok || e.State.Dyn.Users != users {
						return false
					}
				}
			}
			return true
		})
	}
	on, off := ts[0], ts[1]
	if on.compressed.Load() == 0 || on.packets.Load() == 0 {
		t.Errorf("compression on: none of %d packets was compressed", on.packets.Load())
	}
	if n := off.compressed.Load(); n != 0 || off.packets.Load() == 0 {
		t.Errorf("compression off: %d of %d packets compressed, want 0 of some", n, off.packets.Load())
	}
}
