package raftnode

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

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
	// Dir holds the log and stable store (raft.db) and the snapshots.
	Dir     string
	Timings Timings
	// Listener is the bound raft port; Advertise the address peers dial.
	Listener  net.Listener
	Advertise net.Addr
	// Roots are the trusted CAs and Leaf this node's certificate: raft
	// speaks only mutual TLS (stream.go).
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
	// Logger receives raft's logs (through hclog).
	Logger *slog.Logger
}

// Validate names the first missing field.
func (c *Config) Validate() error {
	switch {
	case c.ID == "":
		return errors.New("raft node: empty ID")
	case c.Dir == "":
		return errors.New("raft node: empty directory")
	case c.Listener == nil || c.FSM == nil || c.Roots == nil || c.Leaf == nil:
		return errors.New("raft node: listener, FSM, roots and leaf are required")
	}
	return nil
}

// Node is a running raft instance with its transport and stores.
type Node struct {
	// Raft is the instance (state, configuration, Apply, Barrier…).
	Raft *raft.Raft
	// LeaderCh is raft's NotifyCh: buffered, so no transition is lost.
	LeaderCh <-chan bool

	trans  *raft.NetworkTransport
	bolt   *raftboltdb.BoltStore
	stable *guardedStable
}

// Start opens the stores under cfg.Dir and starts raft over the TLS
// stream layer. The node is not part of any cluster until it bootstraps
// (Bootstrap) or a leader adds it.
func Start(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	dir := cfg.Dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft dir: %w", err)
	}
	hl := raftLogger(cfg.Logger)
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	if err != nil {
		return nil, fmt.Errorf("open raft store %s: %w", filepath.Join(dir, "raft.db"), err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hl)
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("open snapshot store: %w", err)
	}
	logs, err := raft.NewLogCache(512, bolt)
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("raft log cache: %w", err)
	}
	n := &Node{bolt: bolt, stable: &guardedStable{s: bolt}}
	n.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: newTLSStream(cfg.Listener, cfg.Advertise, cfg.Roots, cfg.Leaf), MaxPool: 3, Timeout: 10 * time.Second, Logger: hl,
	})

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hl
	rc.HeartbeatTimeout = cfg.Timings.HeartbeatTimeout
	rc.ElectionTimeout = cfg.Timings.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.Timings.LeaderLeaseTimeout
	rc.CommitTimeout = cfg.Timings.CommitTimeout
	rc.SnapshotThreshold = 2048
	rc.TrailingLogs = 4096
	// A buffered NotifyCh: LeaderCh drops transitions when nobody reads.
	ch := make(chan bool, 32)
	rc.NotifyCh, n.LeaderCh = ch, ch

	fsm := &notifyingFSM{FSM: cfg.FSM, wake: cfg.Wake, onApply: cfg.OnApply, onRestore: cfg.OnRestore}
	r, err := raft.NewRaft(rc, fsm, logs, n.stable, snaps, n.trans)
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	n.Raft = r
	return n, nil
}

// CloseTransport closes the raft transport (after Raft.Shutdown).
func (n *Node) CloseTransport() error { return n.trans.Close() }

// CloseStore closes the log and stable store once no operation is in
// flight; call it last, when nothing uses raft any more (see
// guardedStable).
func (n *Node) CloseStore() error { return n.stable.close(n.bolt.Close) }

// Member reports whether this node is part of a raft configuration.
func (n *Node) Member() bool {
	f := n.Raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	return len(f.Configuration().Servers) > 0
}
