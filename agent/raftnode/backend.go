package raftnode

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// Backend gives a raft node its transport and stores. The agent's is
// Disk: mutual TLS over the raft listener, boltdb and file snapshots
// under the node's directory. An in-memory twin (raft's InmemTransport
// and InmemStore, as testcluster's twins) runs many servers in one
// process and can cut the links between them.
type Backend interface {
	// HasState reports whether the stores hold raft state from an
	// earlier run: the node was a server before it stopped.
	HasState() bool
	// Open returns the transport and stores of a node starting now, with
	// raft's logs going to log. It is called once per start.
	Open(cfg Config, log hclog.Logger) (Parts, error)
}

// Parts are what raft runs on: a transport and the log, stable and
// snapshot stores, with how to release each.
type Parts struct {
	Transport raft.Transport
	Logs      raft.LogStore
	Stable    raft.StableStore
	Snapshots raft.SnapshotStore
	// CloseTransport stops the transport after raft shut down; CloseStore
	// releases the stores once nothing uses raft. Either may be nil.
	CloseTransport, CloseStore func() error
}

// Disk is the agent's backend: raft over the mutual-TLS stream layer on
// the node's raft listener, its log and stable store in boltdb
// (Dir/raft.db) behind a log cache, two snapshots kept in Dir.
type Disk struct {
	// Dir holds raft.db and the snapshots.
	Dir string
}

var _ Backend = Disk{}

// HasState reports whether Dir holds raft's log store.
func (d Disk) HasState() bool { return HasState(d.Dir) }

// Open opens the stores under Dir and the TLS transport on cfg.Listener.
func (d Disk) Open(cfg Config, hl hclog.Logger) (Parts, error) {
	if cfg.Listener == nil || cfg.Roots == nil || cfg.Leaf == nil {
		return Parts{}, fmt.Errorf("raft node: listener, roots and leaf are required")
	}
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return Parts{}, fmt.Errorf("create raft dir: %w", err)
	}
	path := filepath.Join(d.Dir, "raft.db")
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		return Parts{}, fmt.Errorf("open raft store %s: %w", path, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(d.Dir, 2, hl)
	if err != nil {
		bolt.Close()
		return Parts{}, fmt.Errorf("open snapshot store: %w", err)
	}
	logs, err := raft.NewLogCache(512, bolt)
	if err != nil {
		bolt.Close()
		return Parts{}, fmt.Errorf("raft log cache: %w", err)
	}
	// MaxRPCsInFlight 1 replicates without raft's pipeline. At the
	// default of 2 the pipeline's channels are unbuffered, and once a
	// follower answers an append with a failure the replication loop may
	// send once more into a pipeline whose decoder has stopped: the send
	// waits forever, and so does Shutdown (an agent stopped during a
	// rolling restart hung that way). raft's own notes give the pipeline
	// little benefit on a LAN; shoal's entries are batched.
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: newTLSStream(cfg.Listener, cfg.Advertise, cfg.Roots, cfg.Leaf), MaxPool: 3, Timeout: 10 * time.Second, Logger: hl,
		MaxRPCsInFlight: 1,
	})
	return Parts{Transport: trans, Logs: logs, Stable: bolt, Snapshots: snaps,
		CloseTransport: trans.Close, CloseStore: bolt.Close}, nil
}
