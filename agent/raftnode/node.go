package raftnode

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/tlsca"
)

// Timings are hashicorp/raft's timeouts (see the agent's RaftTimings for
// their meaning and defaults).
type Timings struct {
	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout, CommitTimeout time.Duration
}

// Config is what Start builds a raft node from.
type Config struct {
	// ID is the node's raft server ID: its name.
	ID string
	// Backend gives raft its transport and stores; nil is Disk{Dir}.
	Backend Backend
	// Dir holds the log and stable store (raft.db) and the snapshots of
	// the Disk backend.
	Dir     string
	Timings Timings
	// Listener is the bound raft port; Advertise the address peers dial.
	// A backend of its own (an in-memory twin) may ignore Listener.
	Listener  net.Listener
	Advertise net.Addr
	// Roots are the trusted CAs and Leaf this node's certificate: raft
	// speaks only mutual TLS on the Disk backend (stream.go).
	Roots *x509.CertPool
	Leaf  *tlsca.Leaf
	// FSM is the replicated state; Wake channels are signalled (coalesced)
	// after every applied entry.
	FSM  *raftfsm.FSM
	Wake []chan struct{}
	// OnApply, if set, is called after the FSM applied each command entry,
	// from raft's FSM goroutine (it must not block for long); OnRestore
	// after the FSM restored a snapshot, with the index it stands at. A
	// replica.Feed's Applied and Restored.
	OnApply   func(index, term uint64, data []byte)
	OnRestore func(index uint64)
	// Floor is the index FSM already holds (a client becoming a server
	// keeps the state it followed): raft's entries and snapshots at or
	// below it are skipped (catchup.go). 0 for a fresh or restarted node.
	Floor uint64
	// Logger receives raft's logs (through hclog).
	Logger *slog.Logger
}

// Validate names the first missing field.
func (c *Config) Validate() error {
	switch {
	case c.ID == "":
		return errors.New("raft node: empty ID")
	case c.Backend == nil && c.Dir == "":
		return errors.New("raft node: empty directory")
	case c.Backend == nil && (c.Listener == nil || c.Roots == nil || c.Leaf == nil):
		return errors.New("raft node: listener, roots and leaf are required")
	case c.FSM == nil:
		return errors.New("raft node: FSM is required")
	}
	return nil
}

// Node is a running raft instance with its transport and stores.
type Node struct {
	// Raft is the instance (state, configuration, Apply, Barrier…).
	Raft *raft.Raft
	// LeaderCh is raft's NotifyCh: buffered, so no transition is lost.
	LeaderCh <-chan bool

	parts  Parts
	stable *guardedStable
	// dir is the raft directory on disk ("" for a backend without one);
	// watch its log writes' health (logfault.go).
	dir   string
	watch *logWatch
}

// Start opens the backend's transport and stores (by default boltdb
// under cfg.Dir and the TLS stream layer) and starts raft. The node is
// not part of any cluster until it bootstraps (Bootstrap) or a leader
// adds it.
func Start(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Backend == nil {
		cfg.Backend = Disk{Dir: cfg.Dir}
	}
	hl := raftLogger(cfg.Logger)
	parts, err := cfg.Backend.Open(cfg, hl)
	if err != nil {
		return nil, err
	}
	n := &Node{parts: parts, stable: &guardedStable{s: parts.Stable}, watch: &logWatch{}}
	if d, ok := cfg.Backend.(Disk); ok {
		n.dir = d.Dir
	}
	logs := &watchedLogs{LogStore: parts.Logs, watch: n.watch}

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hl
	rc.HeartbeatTimeout = cfg.Timings.HeartbeatTimeout
	rc.ElectionTimeout = cfg.Timings.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.Timings.LeaderLeaseTimeout
	if rc.HeartbeatTimeout > 0 && rc.LeaderLeaseTimeout > 0 {
		rc.LeaderLeaseTimeout = leaseUnderHeartbeat(rc.LeaderLeaseTimeout, rc.HeartbeatTimeout)
	}
	rc.CommitTimeout = cfg.Timings.CommitTimeout
	rc.SnapshotThreshold = 2048
	rc.TrailingLogs = 4096
	// A buffered NotifyCh: LeaderCh drops transitions when nobody reads.
	ch := make(chan bool, 32)
	rc.NotifyCh, n.LeaderCh = ch, ch

	var fsm raft.FSM = &notifyingFSM{FSM: cfg.FSM, wake: cfg.Wake, onApply: cfg.OnApply, onRestore: cfg.OnRestore}
	if cfg.Floor > 0 {
		fsm = &floorFSM{next: fsm, floor: cfg.Floor}
	}
	r, err := raft.NewRaft(rc, fsm, logs, n.stable, parts.Snapshots, parts.Transport)
	if err != nil {
		// The transport stays: it serves on the agent's listener, which
		// the agent closes itself.
		_ = n.CloseStore()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	n.Raft = r
	return n, nil
}

// CloseTransport closes the raft transport (after Raft.Shutdown).
func (n *Node) CloseTransport() error {
	if n.parts.CloseTransport == nil {
		return nil
	}
	return n.parts.CloseTransport()
}

// CloseStore closes the log and stable store once no operation is in
// flight; call it last, when nothing uses raft any more (see
// guardedStable).
func (n *Node) CloseStore() error {
	return n.stable.close(func() error {
		if n.parts.CloseStore == nil {
			return nil
		}
		return n.parts.CloseStore()
	})
}

// Member reports whether this node is part of a raft configuration.
func (n *Node) Member() bool {
	f := n.Raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	return len(f.Configuration().Servers) > 0
}
