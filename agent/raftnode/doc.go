// Package raftnode is the agent's raft plumbing: hashicorp/raft built
// over boltdb stores and a mutual-TLS stream layer, its logs handed to
// slog, a stable store that survives the shutdown race, an FSM wrapper that
// wakes the reconcilers after every applied entry, and the self-bootstrap
// of a new cluster from gossip.
//
// It makes no decisions about the cluster: who is a voter and what gets
// proposed is the leader's business (in the agent).
//
//	n, err := raftnode.Start(raftnode.Config{ID: name, Dir: dir, Listener: ln, Roots: roots, Leaf: leaf, FSM: fsm})
//	go n.Bootstrap(ctx, gossip, name, expect, log) // until a member
//	...
//	n.Raft.Shutdown().Error(); n.CloseTransport(); n.CloseStore()
package raftnode
