package gossip

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// Table keeps the newest state of every node and its liveness. It is pure:
// the caller passes time in and serialises access.
//
// A stored state is never changed in place: Merge replaces it whole with a
// copy of its own, so a state's slices and pointers (PEs, probes, the
// coordinate, the raft proposal, the traffic history) can be shared by
// every copy of the entry handed out. The agent's loops read the whole
// table several times a second; a deep copy of every state and a sort per
// read was over half of an agent's CPU at 300 in-process agents.
type Table struct {
	self string
	rows map[string]*nodestate.Entry
	// order is rows sorted by name, kept on insert and removal (names
	// never change), so that a read neither sorts nor walks the map.
	order []*nodestate.Entry
}

// NewTable returns a table owned by the node called self.
func NewTable(self string) *Table {
	return &Table{self: self, rows: make(map[string]*nodestate.Entry)}
}

// insert adds a new row under e.State.Name, keeping order sorted.
func (t *Table) insert(e *nodestate.Entry) {
	name := e.State.Name
	t.rows[name] = e
	i, _ := slices.BinarySearchFunc(t.order, name, func(o *nodestate.Entry, n string) int { return strings.Compare(o.State.Name, n) })
	t.order = slices.Insert(t.order, i, e)
}

// Merge keeps s if it is newer than what the table holds for that node and
// reports whether it did. A remote copy of the owner's own state is never
// taken: only the owner writes it.
func (t *Table) Merge(s nodestate.NodeState, remote bool) bool {
	if remote && s.Name == t.self {
		return false
	}
	e, ok := t.rows[s.Name]
	if !ok {
		t.insert(&nodestate.Entry{State: s.Clone(), Status: nodestate.StatusUnknown, HasState: true, Traffic: addTraffic(nil, s.Dyn)})
		return true
	}
	if e.HasState && !s.Newer(&e.State) {
		return false
	}
	// Copied once per write, never per read: the caller may go on using
	// s, and readers share what the table holds.
	e.State, e.HasState = s.Clone(), true
	e.Traffic = addTraffic(e.Traffic, s.Dyn)
	if s.Leaving && e.Status == nodestate.StatusDead {
		// The leave intent arrived after memberlist's death notice.
		e.Status = nodestate.StatusLeft
	}
	return true
}

// stale reports whether Merge would refuse a remote state of version v:
// the owner's own, or not newer than the one held.
func (t *Table) stale(v nodestate.Version) bool {
	if string(v.Name) == t.self {
		return true
	}
	e, ok := t.rows[string(v.Name)] // the compiler looks up without copying
	if !ok || !e.HasState {
		return false
	}
	s := nodestate.NodeState{Boot: v.Boot, Seq: v.Seq}
	return !s.Newer(&e.State)
}

// SetStatus records a liveness change seen at now.
func (t *Table) SetStatus(name string, st nodestate.Status, now time.Time) {
	e, ok := t.rows[name]
	if !ok {
		e = &nodestate.Entry{State: nodestate.NodeState{Name: name}}
		t.insert(e)
	}
	if st == nodestate.StatusDead && e.HasState && e.State.Leaving {
		st = nodestate.StatusLeft
	}
	if e.Status != st {
		e.Status, e.Since = st, now
	}
}

// SeenLive records that a snapshot of memberlist's members, taken at or
// before now, listed the node as alive or suspect. It never takes a dead or
// departed node back: the snapshot is read outside the table's lock, so a
// death notice may land between the snapshot and this call, and the
// snapshot's stale "alive" would then stand until memberlist's next event
// about that node, which for a killed node never comes. A node that does
// come back is announced by memberlist's join notice (SetStatus). It
// reports whether it kept a dead or departed status.
func (t *Table) SeenLive(name string, st nodestate.Status, now time.Time) (kept bool) {
	if e, ok := t.rows[name]; ok && (e.Status == nodestate.StatusDead || e.Status == nodestate.StatusLeft) {
		return true
	}
	t.SetStatus(name, st, now)
	return false
}

// Get returns a copy of one entry that shares the state's slices and
// pointers with the table, as Entries' do: see Gossip.Nodes for what the
// caller may change.
func (t *Table) Get(name string) (nodestate.Entry, bool) {
	e, ok := t.rows[name]
	if !ok {
		return nodestate.Entry{}, false
	}
	return *e, true
}

// Reap drops dead and departed nodes whose status is older than after and
// returns their names.
func (t *Table) Reap(now time.Time, after time.Duration) []string {
	var gone []string
	for name, e := range t.rows {
		if name == t.self {
			continue
		}
		if (e.Status == nodestate.StatusDead || e.Status == nodestate.StatusLeft) && now.Sub(e.Since) >= after {
			delete(t.rows, name)
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		t.order = slices.DeleteFunc(t.order, func(e *nodestate.Entry) bool { return t.rows[e.State.Name] != e })
	}
	sort.Strings(gone)
	return gone
}

// Entries returns every row, sorted by name, in a new slice of copies of
// the entries that share their states' slices and pointers with the
// table: the cost of a read is one allocation and a copy per row. See
// Gossip.Nodes for what the caller may change.
func (t *Table) Entries() []nodestate.Entry {
	out := make([]nodestate.Entry, len(t.order))
	for i, e := range t.order {
		out[i] = *e
	}
	return out
}

// failed returns the entries of dead nodes (not departed) for the
// reconnect loop, by name. The states share their slices with the
// table (as liveShared's): only read them.
func (t *Table) failed() []nodestate.Entry {
	var out []nodestate.Entry
	for _, e := range t.order {
		if e.Status == nodestate.StatusDead {
			out = append(out, *e)
		}
	}
	return out
}

// Live returns the states of nodes that are alive or suspect, for push/pull:
// a peer learns about the dead from memberlist, not from us.
func (t *Table) Live() []nodestate.NodeState {
	out := t.liveShared()
	for i := range out {
		out[i] = out[i].Clone()
	}
	return out
}

// liveShared is Live without the deep copies, for encoding a push/pull:
// the states share their slices with the table, which never changes a held
// state's slices in place (Merge and Update replace a state whole), so the
// caller may read them after releasing its lock but must not modify them.
// A push/pull at 1,000 nodes copied every state twice (Entries, then Live)
// and every slice of each: 4.5 % of the bytes a 1,000-agent harness run
// allocated (docs/design/scale.md).
func (t *Table) liveShared() []nodestate.NodeState {
	// Sorted by name (a deterministic encoding), as the table keeps its rows.
	out := make([]nodestate.NodeState, 0, len(t.order))
	for _, e := range t.order {
		if e.HasState && (e.Status == nodestate.StatusAlive || e.Status == nodestate.StatusSuspect || e.State.Name == t.self) {
			out = append(out, e.State)
		}
	}
	return out
}
