package nodestate

import (
	"encoding/json"
	"fmt"
)

// A node's network row grows with the cluster (about 95 bytes per peer as
// JSON). Carried in every gossiped state it made push/pull O(n²): ~1 MB at
// 100 nodes, past the decoder's 8 MiB near 293 (docs/design/scale.md, wall 1).
// So rows no longer travel by gossip at all: the owner sends its row,
// versioned, to the servers (agent/rows), which hold the matrix the
// placement leader reads. A NetRow is that message. NodeState has no row;
// a state from an older agent that still carries a "net" key decodes with
// the key ignored (JSON's unknown fields), so a rolling upgrade works.

// NetRow is one node's row of the network matrix as its owner sends it to
// the servers. Boot and V version it: a row replaces another of the same
// node when its (Boot, V) is greater. The whole NetEntry is encoded, so a
// field added to NetEntry travels without a change here.
type NetRow struct {
	Node string `json:"node"`
	// Boot is the owner's gossip Boot (start time, Unix nanoseconds).
	Boot int64 `json:"boot"`
	// V grows with every change of the row within one boot.
	V     uint64     `json:"v"`
	Cells []NetEntry `json:"cells"`
	// Base, when not zero, makes the message a delta: Cells are only the
	// cells that changed since version Base of the same boot and Gone the
	// peers dropped since. A server holding exactly version Base applies
	// it; any other refuses it and the owner sends the whole row.
	Base uint64   `json:"base,omitempty"`
	Gone []string `json:"gone,omitempty"`
}

// Bounds on a row a server accepts: one cell per peer, at most MaxNetCells
// peers, and at most MaxNetRowBytes encoded (an honest row of MaxNetCells
// cells of today's fields is ~1.6 MiB; the rest leaves room for fields a
// later version adds).
const (
	MaxNetCells    = maxNet
	MaxNetRowBytes = 4 << 20
)

// Newer reports whether r is a later version of its node's row than o.
func (r *NetRow) Newer(o *NetRow) bool {
	if r.Boot != o.Boot {
		return r.Boot > o.Boot
	}
	return r.V > o.V
}

// Validate rejects a row no honest agent would send.
func (r *NetRow) Validate() error {
	switch {
	case r.Node == "" || len(r.Node) > MaxNameLen:
		return fmt.Errorf("%w: row owner %q must have 1 to %d bytes", ErrMalformed, r.Node, MaxNameLen)
	case len(r.Cells) > MaxNetCells || len(r.Gone) > MaxNetCells:
		return fmt.Errorf("%w: row of %s has %d cells, at most %d", ErrTooLarge, r.Node, max(len(r.Cells), len(r.Gone)), MaxNetCells)
	case r.Base != 0 && r.Base >= r.V:
		return fmt.Errorf("%w: row of %s: delta from version %d to %d", ErrMalformed, r.Node, r.Base, r.V)
	case r.Base == 0 && len(r.Gone) > 0:
		return fmt.Errorf("%w: row of %s: a whole row drops no peers", ErrMalformed, r.Node)
	}
	for _, p := range r.Gone {
		if p == "" || len(p) > MaxNameLen {
			return fmt.Errorf("%w: row of %s: bad dropped peer %q", ErrMalformed, r.Node, p)
		}
	}
	for _, e := range r.Cells {
		if e.Peer == "" || len(e.Peer) > MaxNameLen || bad(e.RTT1us) || bad(e.RTT5us) || bad(e.AvailMbps) || bad(e.PeakMbps) {
			return fmt.Errorf("%w: row of %s: bad network entry for %q", ErrMalformed, r.Node, e.Peer)
		}
	}
	return nil
}

// EncodeNetRow encodes a row for the servers.
func EncodeNetRow(r *NetRow) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode network row: %w", err)
	}
	return b, nil
}

// DecodeNetRow decodes and validates a row, refusing one over MaxNetRowBytes.
func DecodeNetRow(b []byte) (NetRow, error) {
	if len(b) > MaxNetRowBytes {
		return NetRow{}, fmt.Errorf("%w: network row of %d bytes, at most %d", ErrTooLarge, len(b), MaxNetRowBytes)
	}
	var r NetRow
	if err := json.Unmarshal(b, &r); err != nil {
		return NetRow{}, fmt.Errorf("%w: network row: %w", ErrMalformed, err)
	}
	if err := r.Validate(); err != nil {
		return NetRow{}, err
	}
	return r, nil
}
