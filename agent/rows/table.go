package rows

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// MaxRows bounds how many owners a Table holds (gossip's own bound on the
// states of one push/pull).
const MaxRows = 1 << 16

// Table is a server's copy of every node's row: the newest version per
// owner. It does no I/O and reads no clock (now is an argument); it is
// safe for concurrent use.
type Table struct {
	mu   sync.Mutex
	rows map[string]*held
	max  int
}

type held struct {
	row nodestate.NetRow
	// seen is when the row (or an equal version of it) last arrived.
	seen time.Time
}

// NewTable returns an empty table of at most MaxRows owners.
func NewTable() *Table { return &Table{rows: map[string]*held{}, max: MaxRows} }

// ErrNeedFull refuses a delta whose base version the table does not
// hold: the owner sends its whole row instead.
var ErrNeedFull = errors.New("network row delta does not apply: send the whole row")

// Put keeps r if it is newer than the row held for its owner and reports
// whether it did; an equal version only refreshes when it was seen. A
// delta (r.Base != 0) applies only to the row of version Base of the same
// boot, else it is ErrNeedFull. A row that fails validation, a delta
// that would grow the row past nodestate.MaxNetCells, or a new owner in a
// full table is an error and changes nothing.
func (t *Table) Put(r nodestate.NetRow, now time.Time) (bool, error) {
	if err := r.Validate(); err != nil {
		return false, fmt.Errorf("refused network row: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.rows[r.Node]
	if ok && r.Boot == h.row.Boot && r.V == h.row.V {
		h.seen = now
		return false, nil
	}
	if ok && !r.Newer(&h.row) {
		return false, nil // stale: the table has a later version
	}
	if r.Base != 0 {
		if !ok || h.row.Boot != r.Boot || h.row.V != r.Base {
			return false, fmt.Errorf("row of %s version %d from %d: %w", r.Node, r.V, r.Base, ErrNeedFull)
		}
		full, err := applyDelta(h.row, r)
		if err != nil {
			return false, err
		}
		h.row, h.seen = full, now
		return true, nil
	}
	if !ok && len(t.rows) >= t.max {
		return false, fmt.Errorf("refused network row of %s: the table holds %d rows, at most %d", r.Node, len(t.rows), t.max)
	}
	if !ok {
		h = &held{}
		t.rows[r.Node] = h
	}
	h.row, h.seen = clone(r), now
	return true, nil
}

// applyDelta is base with delta's cells replaced or added and its gone
// peers dropped, at delta's version, sorted by peer.
func applyDelta(base, delta nodestate.NetRow) (nodestate.NetRow, error) {
	cells := make(map[string]nodestate.NetEntry, len(base.Cells)+len(delta.Cells))
	for _, c := range base.Cells {
		cells[c.Peer] = c
	}
	for _, c := range delta.Cells {
		cells[c.Peer] = c
	}
	for _, p := range delta.Gone {
		delete(cells, p)
	}
	if len(cells) > nodestate.MaxNetCells {
		return nodestate.NetRow{}, fmt.Errorf("refused network row of %s: %d cells after the delta, at most %d", base.Node, len(cells), nodestate.MaxNetCells)
	}
	out := nodestate.NetRow{Node: base.Node, Boot: base.Boot, V: delta.V, Cells: make([]nodestate.NetEntry, 0, len(cells))}
	for _, c := range cells {
		out.Cells = append(out.Cells, c)
	}
	sort.Slice(out.Cells, func(i, j int) bool { return out.Cells[i].Peer < out.Cells[j].Peer })
	return out, nil
}

// Get returns a copy of the row held for node.
func (t *Table) Get(node string) (nodestate.NetRow, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.rows[node]
	if !ok {
		return nodestate.NetRow{}, false
	}
	return clone(h.row), true
}

// Read calls fn with the row held for node, without copying it; fn must
// not keep or change the row, nor call the table.
func (t *Table) Read(node string, fn func(nodestate.NetRow)) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.rows[node]
	if ok {
		fn(h.row)
	}
	return ok
}

// Len is the number of rows held.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.rows)
}

// All returns copies of every row, sorted by owner.
func (t *Table) All() []nodestate.NetRow {
	t.mu.Lock()
	out := make([]nodestate.NetRow, 0, len(t.rows))
	for _, h := range t.rows {
		out = append(out, clone(h.row))
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// Prune drops the rows gossip says are gone: of a dead or departed node,
// of an earlier boot than the node's state, and of a node gossip does not
// know (reaped, or never seen) whose row has not arrived for grace. It
// returns the owners dropped, sorted. A row of a node gossip has not
// learnt of yet survives grace, so a row that outruns its owner's state
// is not lost.
func (t *Table) Prune(now time.Time, nodes []nodestate.Entry, grace time.Duration) []string {
	known := make(map[string]nodestate.Entry, len(nodes))
	for _, e := range nodes {
		known[e.State.Name] = e
	}
	t.mu.Lock()
	var gone []string
	for name, h := range t.rows {
		e, ok := known[name]
		drop := false
		switch {
		case !ok:
			drop = now.Sub(h.seen) >= grace
		case e.Status == nodestate.StatusDead || e.Status == nodestate.StatusLeft:
			drop = true
		case e.HasState && e.State.Boot > h.row.Boot:
			drop = true
		}
		if drop {
			delete(t.rows, name)
			gone = append(gone, name)
		}
	}
	t.mu.Unlock()
	sort.Strings(gone)
	return gone
}

func clone(r nodestate.NetRow) nodestate.NetRow {
	r.Cells = append([]nodestate.NetEntry(nil), r.Cells...)
	r.Gone = append([]string(nil), r.Gone...)
	return r
}
