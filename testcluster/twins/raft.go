package twins

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/raftnode"
)

// Raft returns name's raft backend: raft's InmemTransport at the address
// the agent advertises, and an InmemStore and in-memory snapshot store
// that outlive the node's restarts, as its disk would. The same backend
// serves every start of name.
func (n *Network) Raft(name string) raftnode.Backend {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, ok := n.raft[name]
	if !ok {
		b = &raftBackend{net: n, name: name, store: raft.NewInmemStore(), snaps: raft.NewInmemSnapshotStore()}
		n.raft[name] = b
	}
	return b
}

// raftBackend is one node's raft twin.
type raftBackend struct {
	net   *Network
	name  string
	store *raft.InmemStore
	snaps *raft.InmemSnapshotStore

	// addr and trans are the running node's transport, set by Open and
	// cleared when it closes; under net.mu.
	addr  raft.ServerAddress
	trans *raft.InmemTransport
}

var _ raftnode.Backend = (*raftBackend)(nil)

// HasState reports whether the stores hold raft state of an earlier start.
func (b *raftBackend) HasState() bool {
	ok, err := raft.HasExistingState(b.store, b.store, b.snaps)
	return err == nil && ok
}

// Open starts an InmemTransport at cfg.Advertise and links it to every
// running node the network links name to.
func (b *raftBackend) Open(cfg raftnode.Config, _ hclog.Logger) (raftnode.Parts, error) {
	if cfg.Advertise == nil {
		return raftnode.Parts{}, errors.New("raft twin: no address to advertise")
	}
	b.net.mu.Lock()
	defer b.net.mu.Unlock()
	if b.trans != nil {
		return raftnode.Parts{}, fmt.Errorf("raft twin %s: already running", b.name)
	}
	b.addr, b.trans = raft.NewInmemTransport(raft.ServerAddress(cfg.Advertise.String()))
	b.net.rewire()
	trans := b.trans
	return raftnode.Parts{Transport: trans, Logs: b.store, Stable: b.store, Snapshots: b.snaps,
		CloseTransport: func() error { b.close(trans); return nil }}, nil
}

// close takes trans off the network: no peer reaches it any more.
func (b *raftBackend) close(trans *raft.InmemTransport) {
	b.net.mu.Lock()
	defer b.net.mu.Unlock()
	if b.trans != trans {
		return
	}
	for name, o := range b.net.raft {
		if name != b.name && o.trans != nil {
			o.trans.Disconnect(b.addr)
		}
	}
	trans.Close()
	b.trans = nil
}
