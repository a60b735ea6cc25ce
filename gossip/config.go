package gossip

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
)

// Config tunes the gossip layer. The zero value is not usable; start from
// DefaultConfig.
type Config struct {
	// Name is this node's unique name in the cluster. Required.
	Name string
	// BindAddr is the IP to listen on. Default "0.0.0.0".
	BindAddr string
	// AdvertiseAddr is the IP other nodes use to reach this one. Default:
	// BindAddr, or memberlist's pick of a private address when binding to
	// all interfaces.
	AdvertiseAddr string
	// Port is the TCP and UDP port for gossip; 0 picks a free one. Default 7946.
	Port int
	// Key encrypts gossip with AES-GCM when set; 16, 24 or 32 bytes.
	Key []byte
	// Compression LZW-compresses every gossip packet and stream before it is
	// encrypted (memberlist's EnableCompression). Default on, memberlist's
	// LAN value and what agents have always sent: a JSON node state shrinks
	// by about half, so push/pull and broadcasts cost half the bytes on the
	// wire. It costs CPU per packet (memberlist allocates a 64 KiB LZW table
	// for each), which a real agent pays once for its own packets; the scale
	// harness, which runs n agents on one machine's cores, turns it off. A
	// node accepts compressed and uncompressed packets whatever this says,
	// so agents that differ here still talk.
	Compression bool

	// ProbeInterval is how often memberlist probes one random node.
	// Default 1s (memberlist's LAN value).
	ProbeInterval time.Duration
	// ProbeTimeout is how long a direct probe waits for an ack before asking
	// others to probe indirectly. Default 500ms (LAN).
	ProbeTimeout time.Duration
	// GossipInterval is how often queued broadcasts are sent to GossipNodes
	// random peers. Default 100ms, half memberlist's LAN value: node state is
	// small and spreading it fast is shoal's main use of gossip.
	GossipInterval time.Duration
	// GossipNodes is the fan-out of each gossip round. Default 4 (LAN: 3).
	GossipNodes int
	// SuspicionMult scales how long a suspect node has to refute before it is
	// declared dead. Default 4 (LAN).
	SuspicionMult int
	// PushPullInterval is how often a full state exchange happens with one
	// random node; it repairs whatever broadcasts missed. Default 15s (LAN: 30s).
	PushPullInterval time.Duration
	// ReapAfter is how long a dead or departed node stays listed. Default 1h.
	ReapAfter time.Duration
	// ReconnectInterval is how often one dead node is tried again, so that
	// a healed partition re-forms one cluster. Default 10s.
	ReconnectInterval time.Duration

	// MaxInboundStreams caps the inbound gossip TCP streams open at once;
	// more are closed on arrival. Default 128. Push/pulls, joins and TCP
	// fallback pings each hold one for milliseconds.
	MaxInboundStreams int
	// MaxStreamsPerSource caps the inbound streams open at once from one IP
	// address. Default 16.
	MaxStreamsPerSource int
	// MaxPendingStreamBytes caps the bytes all open inbound streams may
	// make memberlist buffer before it can decrypt them (the lengths their
	// first messages declare). Default 64 MiB.
	MaxPendingStreamBytes int64

	// Coordinates turns on Vivaldi network coordinates (coord.go): acks of
	// memberlist's pings carry the node's coordinate and the node gossips
	// it in its state, so any agent estimates any pair's RTT. Default on.
	Coordinates bool
	// CoordinateInterval is how long the coordinate may go unpublished when
	// nothing else updates this node's state. Default 10s.
	CoordinateInterval time.Duration
	// CoordinateMinOf is how many of the latest ping RTTs to each peer the
	// coordinate is fed the minimum of (rttfilter.go); 1 feeds every RTT
	// as measured, as Serf does. Default 1: on the testbed the minimum of
	// 8 hid the queueing delay of a saturated uplink (cross-switch median
	// relative error 0.55 against 0.08 raw) while it only trimmed agent
	// scheduling noise on idle sub-millisecond links (docs/design/network-model.md).
	CoordinateMinOf int
	// Transport, when set, carries memberlist's packets and streams instead
	// of UDP and TCP sockets bound at BindAddr:Port (which are then
	// ignored). It is for running many nodes in one process: tests and
	// shoal-dev bench-scale use memberlist's in-memory MockNetwork. The
	// stream guard wraps it as it wraps the sockets; Shutdown shuts it down.
	Transport memberlist.NodeAwareTransport

	// OnPropagation, when set, is told how long each change of another
	// node's state took to reach this node by broadcast: this node's clock
	// at its arrival minus the owner's when it published it (so the two
	// clocks' offset is in it). Push/pull copies, which carry states of any
	// age, are not timed. It must not block.
	OnPropagation func(time.Duration)

	// Logger receives structured logs; memberlist's own lines are routed
	// into it. Default: slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the settings for a LAN cluster.
func DefaultConfig() Config {
	return Config{
		BindAddr:          "0.0.0.0",
		Port:              7946,
		Compression:       true,
		ProbeInterval:     time.Second,
		ProbeTimeout:      500 * time.Millisecond,
		GossipInterval:    100 * time.Millisecond,
		GossipNodes:       4,
		SuspicionMult:     4,
		PushPullInterval:  15 * time.Second,
		ReapAfter:         time.Hour,
		ReconnectInterval: 10 * time.Second,

		Coordinates:        true,
		CoordinateInterval: 10 * time.Second,
		CoordinateMinOf:    1,

		MaxInboundStreams:     128,
		MaxStreamsPerSource:   16,
		MaxPendingStreamBytes: 64 << 20,
	}
}

// TestConfig returns settings that detect failures within a few seconds,
// for tests on loopback. The probe timeout keeps headroom for a loaded
// two-core machine running the race detector: a tighter one declares busy
// nodes dead.
func TestConfig() Config {
	c := DefaultConfig()
	c.BindAddr = "127.0.0.1"
	c.Port = 0
	c.ProbeInterval = 400 * time.Millisecond
	c.ProbeTimeout = 250 * time.Millisecond
	c.GossipInterval = 50 * time.Millisecond
	// A suspect is declared dead after SuspicionMult probe intervals
	// (3.2 s here): at 4 (1.6 s) a loaded 2-core machine running the suite
	// under -race made false deaths that failed jobs' attempts.
	c.SuspicionMult = 8
	c.PushPullInterval = 2 * time.Second
	c.ReconnectInterval = time.Second
	c.CoordinateInterval = time.Second
	// Every node of a loopback cluster is the same source address.
	c.MaxStreamsPerSource = c.MaxInboundStreams
	return c
}

// Validate names the first field that is out of bounds.
func (c Config) Validate() error {
	switch {
	case c.Name == "" || len(c.Name) > nodestate.MaxNameLen:
		return fmt.Errorf("gossip: Name must have 1 to %d bytes", nodestate.MaxNameLen)
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("gossip: Port %d is outside 0-65535", c.Port)
	case c.Key != nil && len(c.Key) != 16 && len(c.Key) != 24 && len(c.Key) != 32:
		return fmt.Errorf("gossip: Key has %d bytes, want 16, 24 or 32", len(c.Key))
	case c.ProbeInterval <= 0 || c.ProbeTimeout <= 0 || c.ProbeTimeout >= c.ProbeInterval:
		return fmt.Errorf("gossip: need 0 < ProbeTimeout (%v) < ProbeInterval (%v)", c.ProbeTimeout, c.ProbeInterval)
	case c.GossipInterval <= 0 || c.GossipNodes < 1:
		return fmt.Errorf("gossip: GossipInterval must be > 0 and GossipNodes >= 1")
	case c.SuspicionMult < 1:
		return fmt.Errorf("gossip: SuspicionMult must be >= 1")
	case c.PushPullInterval <= 0:
		return fmt.Errorf("gossip: PushPullInterval must be > 0")
	case c.ReapAfter <= 0:
		return fmt.Errorf("gossip: ReapAfter must be > 0")
	case c.ReconnectInterval <= 0:
		return fmt.Errorf("gossip: ReconnectInterval must be > 0")
	case c.MaxInboundStreams < 1 || c.MaxStreamsPerSource < 1:
		return fmt.Errorf("gossip: MaxInboundStreams (%d) and MaxStreamsPerSource (%d) must be >= 1", c.MaxInboundStreams, c.MaxStreamsPerSource)
	case c.Coordinates && c.CoordinateInterval < 10*time.Millisecond:
		return fmt.Errorf("gossip: CoordinateInterval %v must be at least 10ms when Coordinates is on", c.CoordinateInterval)
	case c.Coordinates && (c.CoordinateMinOf < 1 || c.CoordinateMinOf > 64):
		return fmt.Errorf("gossip: CoordinateMinOf %d must be 1 to 64 when Coordinates is on", c.CoordinateMinOf)
	case c.MaxPendingStreamBytes < minStreamMessage:
		return fmt.Errorf("gossip: MaxPendingStreamBytes (%d) must be at least %d, one push/pull", c.MaxPendingStreamBytes, minStreamMessage)
	}
	return nil
}
