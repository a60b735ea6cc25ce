// Package raftnode is the agent's raft plumbing: hashicorp/raft built
// over a Backend (Disk: boltdb stores and a mutual-TLS stream layer; an
// in-memory twin in tests), its logs handed to
// slog, a stable store that survives the shutdown race, an FSM wrapper that
// wakes the reconcilers after every applied entry, the floor that lets a
// client become a server on the state it followed (catchup.go), and the
// rules of the self-bootstrap of a new cluster from gossip.
//
// It makes no decisions about the cluster: who is a voter and what gets
// proposed is the leader's business (in the agent).
//
//	n, err := raftnode.Start(raftnode.Config{ID: name, Dir: dir, Listener: ln, Roots: roots, Leaf: leaf, FSM: fsm})
//	views := raftnode.BootViews(gossip)             // the agent's role loop, while no member exists:
//	prop := raftnode.BootstrapProposal(views, expect) // published in gossip
//	if raftnode.BootstrapReady(name, views, prop) { n.BootstrapWith(views, prop, log) }
//	...
//	n.Raft.Shutdown().Error(); n.CloseTransport(); n.CloseStore()
package raftnode
