package twins

import (
	"slices"
	"sync"
)

// Network is the medium of one cluster's twins: which node's twin is up
// at which address, and which links are cut. The zero value is not
// usable; use NewNetwork.
type Network struct {
	mu sync.Mutex
	// gossip is each node's current memberlist transport, byAddr the
	// node at each gossip address; a node keeps its address across
	// restarts.
	gossip map[string]*gossipTransport
	addrs  map[string]string
	byAddr map[string]string
	// raft is each node's raft backend, with its stores and, while it
	// runs, its transport.
	raft map[string]*raftBackend
	// cut holds the links that carry nothing, by ordered pair of names.
	cut      map[link]bool
	nextPort int
}

type link struct{ a, b string }

func pair(a, b string) link {
	if b < a {
		a, b = b, a
	}
	return link{a, b}
}

// NewNetwork returns a network with every link up.
func NewNetwork() *Network {
	return &Network{gossip: map[string]*gossipTransport{}, addrs: map[string]string{}, byAddr: map[string]string{},
		raft: map[string]*raftBackend{}, cut: map[link]bool{}, nextPort: 10000}
}

// linked reports whether a and b can talk; n.mu held.
func (n *Network) linked(a, b string) bool { return a == b || !n.cut[pair(a, b)] }

// names lists every node the network has seen; n.mu held.
func (n *Network) names() []string {
	var out []string
	for name := range n.addrs {
		out = append(out, name)
	}
	for name := range n.raft {
		if _, ok := n.addrs[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Partition cuts every link between nodes of different groups. Links
// within a group, and those of nodes in no group, are left as they are.
func (n *Network) Partition(groups ...[]string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, g := range groups {
		for _, h := range groups[i+1:] {
			for _, a := range g {
				for _, b := range h {
					if a != b {
						n.cut[pair(a, b)] = true
					}
				}
			}
		}
	}
	n.rewire()
}

// Disconnect cuts every link of name to the nodes the network has seen.
func (n *Network) Disconnect(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, other := range n.names() {
		if other != name {
			n.cut[pair(name, other)] = true
		}
	}
	n.rewire()
}

// Heal restores every link.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
	n.rewire()
}

// Linked reports whether a and b can talk now.
func (n *Network) Linked(a, b string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.linked(a, b)
}

// rewire makes raft's transports match the links: gossip reads them at
// every packet, raft's InmemTransports hold peers of their own; n.mu held.
func (n *Network) rewire() {
	for a, ra := range n.raft {
		if ra.trans == nil {
			continue
		}
		for b, rb := range n.raft {
			if a == b || rb.trans == nil {
				continue
			}
			if n.linked(a, b) {
				ra.trans.Connect(rb.addr, rb.trans)
			} else {
				ra.trans.Disconnect(rb.addr)
			}
		}
	}
}
