package gossip

import (
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/vivaldi"
)

// pinger is Gossip's face to memberlist as its PingDelegate: it puts this
// node's coordinate in every ack it sends and updates the coordinate with
// every direct ping it completes. See coord.go.
type pinger Gossip

var _ memberlist.PingDelegate = (*pinger)(nil)

// AckPayload runs on memberlist's packet loop for every ping this node
// answers.
func (p *pinger) AckPayload() []byte {
	g := (*Gossip)(p)
	b, err := nodestate.EncodeCoordPayload(vivaldi.FromSerf(g.coord.GetCoordinate()))
	if err != nil {
		g.log.Error("encode own coordinate", "err", err)
		return nil
	}
	return b
}

// NotifyPingComplete runs when the ack of a direct ping arrives, with the
// RTT memberlist measured and the payload the peer put in its ack. The
// payload comes from the network: anything malformed is dropped.
func (p *pinger) NotifyPingComplete(other *memberlist.Node, rtt time.Duration, payload []byte) {
	g := (*Gossip)(p)
	if other == nil || other.Name == g.cfg.Name {
		return
	}
	if len(payload) == 0 {
		// A peer running with coordinates off acks without a payload.
		return
	}
	c, err := nodestate.DecodeCoordPayload(payload)
	if err != nil {
		g.log.Debug("dropped coordinate in ping ack", "node", other.Name, "err", err, "bytes", len(payload))
		return
	}
	if _, err := g.coord.Update(other.Name, vivaldi.ToSerf(c), g.rttMin.add(other.Name, rtt)); err != nil {
		g.log.Debug("coordinate not updated", "node", other.Name, "rtt", rtt, "err", err)
		return
	}
	g.coordUpdates.Add(1)
}

// Coordinate returns this node's current network coordinate, or nil when
// coordinates are off.
func (g *Gossip) Coordinate() *nodestate.Coord {
	if g.coord == nil {
		return nil
	}
	return vivaldi.FromSerf(g.coord.GetCoordinate())
}

// CoordinateUpdates counts the pings that moved this node's coordinate.
func (g *Gossip) CoordinateUpdates() uint64 { return g.coordUpdates.Load() }

// coordLoop publishes the coordinate when nothing else has updated this
// node's state for a CoordinateInterval: agents that sample every few
// seconds carry it on those updates and this loop stays silent.
func (g *Gossip) coordLoop() {
	defer g.done.Done()
	t := time.NewTicker(g.cfg.CoordinateInterval / 2)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.mu.Lock()
			due := g.now().Sub(g.coordAt) >= g.cfg.CoordinateInterval
			g.mu.Unlock()
			if due {
				g.Update(func(*nodestate.NodeState) {})
			}
		}
	}
}
