package gossip

import (
	"encoding/json"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
)

// delegate and events are the two faces Gossip shows memberlist.
// They are conversions of *Gossip so that memberlist's callbacks stay out of
// Gossip's public method set.
type (
	delegate Gossip
	events   Gossip
)

var (
	_ memberlist.Delegate      = (*delegate)(nil)
	_ memberlist.EventDelegate = (*events)(nil)
)

func (d *delegate) NodeMeta(limit int) []byte {
	g := (*Gossip)(d)
	g.mu.Lock()
	m := Meta{Boot: g.self.Boot, RaftPort: g.self.RaftPort, HTTPPort: g.self.HTTPPort}
	g.mu.Unlock()
	b, _ := json.Marshal(m) // three integers: cannot fail, always far below limit
	if len(b) > limit {
		return nil
	}
	return b
}

// NotifyMsg runs on memberlist's packet loop: decode, merge, return.
func (d *delegate) NotifyMsg(b []byte) {
	g := (*Gossip)(d)
	if v, ok := nodestate.PeekVersion(b); ok {
		// Most broadcasts are copies of a state already held (peekVersion
		// says why): drop those before decoding.
		g.mu.Lock()
		stale := g.table.stale(v)
		g.mu.Unlock()
		if stale {
			return
		}
	}
	s, err := nodestate.DecodeState(b)
	if err != nil {
		g.log.Warn("dropped gossip message", "err", err, "bytes", len(b))
		return
	}
	g.mu.Lock()
	fresh := g.table.Merge(s, true)
	g.mu.Unlock()
	if fresh && g.cfg.OnPropagation != nil && s.Published > 0 {
		if d := time.Duration(g.now().UnixMilli()-s.Published) * time.Millisecond; d >= 0 {
			g.cfg.OnPropagation(d)
		}
	}
	if fresh {
		// Re-gossip what was new to us: epidemic spread, bounded by the
		// queue's retransmit limit.
		g.q.QueueBroadcast(&stateBroadcast{name: s.Name, msg: append([]byte(nil), b...)})
		g.notify()
	}
}

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	return d.q.GetBroadcasts(overhead, limit)
}

func (d *delegate) LocalState(join bool) []byte {
	g := (*Gossip)(d)
	g.mu.Lock()
	live := g.table.liveShared() // only read, by the encoder
	g.mu.Unlock()
	b, err := nodestate.EncodeStates(live)
	if err != nil {
		g.log.Error("encode push/pull state", "err", err)
		return nil
	}
	g.stateBytes.Store(int64(len(b)))
	return b
}

func (d *delegate) MergeRemoteState(b []byte, join bool) {
	g := (*Gossip)(d)
	// Most of a push/pull is states already held: decode only the rest
	// (nodestate.DecodeFreshStates says why).
	g.mu.Lock()
	ss, err := nodestate.DecodeFreshStates(b, g.table.stale)
	g.mu.Unlock()
	if err != nil {
		g.log.Warn("dropped push/pull state", "err", err, "bytes", len(b))
		return
	}
	g.mu.Lock()
	fresh := false
	for _, s := range ss {
		fresh = g.table.Merge(s, true) || fresh
	}
	g.mu.Unlock()
	if fresh {
		g.notify()
	}
}

func (e *events) NotifyJoin(n *memberlist.Node)   { e.set(n, nodestate.StatusAlive) }
func (e *events) NotifyUpdate(n *memberlist.Node) { e.set(n, nodestate.StatusAlive) }
func (e *events) NotifyLeave(n *memberlist.Node) {
	if g := (*Gossip)(e); g.coord != nil {
		g.coord.ForgetNode(n.Name)
		g.rttMin.forget(n.Name)
	}
	if n.State == memberlist.StateLeft {
		e.set(n, nodestate.StatusLeft)
		return
	}
	e.set(n, nodestate.StatusDead)
}

func (e *events) set(n *memberlist.Node, st nodestate.Status) {
	g := (*Gossip)(e)
	if n.Name == g.cfg.Name {
		return
	}
	g.mu.Lock()
	g.table.SetStatus(n.Name, st, g.now())
	g.mu.Unlock()
	g.log.Debug("membership", "node", n.Name, "status", st)
	g.notify()
}
