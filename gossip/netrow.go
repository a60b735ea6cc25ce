package gossip

import "slices"

// A node's network row (NodeState.Net) grows with the cluster: about 95
// bytes per peer as JSON, so ~9.3 KB at 100 nodes, while a broadcast must
// fit one UDP packet (memberlist's 1,400-byte buffer, less its headers
// and encryption). A state that does not fit would never be broadcast,
// and with it the node's load and probe heartbeats would only travel by
// push/pull. So a broadcast too big for a packet leaves the row out
// (NetOmitted) and the row travels by push/pull, which carries full
// states; receivers keep the row they have until a newer one arrives.
// The row is a last-writer-wins register of its own, versioned by NetV
// (the owner's Seq when it changed), so the two paths never undo each
// other.

// broadcastBudget is the largest encoded state sent as a broadcast:
// memberlist's UDP buffer (1,400) less the compound-message, label and
// AES-GCM overheads, with room to spare.
const broadcastBudget = 1100

// encodeBroadcast encodes s for a broadcast, without its row if the whole
// state would not fit one packet.
func encodeBroadcast(s *NodeState) ([]byte, error) {
	b, err := EncodeState(s)
	if err != nil || len(b) <= broadcastBudget || len(s.Net) == 0 {
		return b, err
	}
	t := *s
	t.Net, t.NetOmitted = nil, true
	return EncodeState(&t)
}

// keepNetRow gives a newer state that arrived without its row the row the
// table held for the same boot of that node.
func keepNetRow(dst *NodeState, prev NodeState, had bool) {
	dst.NetOmitted = false
	dst.Net, dst.NetV = nil, 0
	if had && prev.Boot == dst.Boot {
		dst.Net, dst.NetV = slices.Clone(prev.Net), prev.NetV
	}
}

// mergeNetRow takes the row of an older or equal state if it is a newer
// row of the same boot (push/pull bringing the row a trimmed broadcast
// left out) and reports whether it did.
func mergeNetRow(dst, s *NodeState) bool {
	if s.NetOmitted || s.Boot != dst.Boot || s.NetV <= dst.NetV {
		return false
	}
	dst.Net, dst.NetV = slices.Clone(s.Net), s.NetV
	return true
}
