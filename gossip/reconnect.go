package gossip

import (
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// reconnectLoop heals partitions. memberlist stops talking to a node it
// declared dead once GossipToTheDeadTime has passed, so two halves of a
// healed partition would each go on believing the other dead. Every
// ReconnectInterval we try to join one failed (not departed) node picked at
// random, as Serf does; a join that gets through exchanges full state and
// both sides see each other alive again.
func (g *Gossip) reconnectLoop() {
	defer g.done.Done()
	t := time.NewTicker(g.cfg.ReconnectInterval)
	defer t.Stop()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		// What Nodes does, without copying every entry: only the dead
		// are read. Every agent does this every ReconnectInterval; at
		// 1,000 nodes the copies were a tenth of a 1,000-agent
		// harness run's CPU.
		members := g.ml.Members()
		g.mu.Lock()
		g.seenMembers(members)
		failed := g.table.failed()
		g.mu.Unlock()
		if addr := pickFailed(failed, g.cfg.Name, rng); addr != "" {
			if n, err := g.ml.Join([]string{addr}); err == nil && n > 0 {
				g.log.Info("reconnected to a failed node", "addr", addr)
			}
		}
	}
}

// pickFailed returns the gossip address of a random dead node, or "".
func pickFailed(entries []nodestate.Entry, self string, rng *rand.Rand) string {
	var failed []string
	for _, e := range entries {
		if e.State.Name != self && e.Status == nodestate.StatusDead && e.State.Addr != "" && e.State.GossipPort != 0 {
			failed = append(failed, net.JoinHostPort(e.State.Addr, strconv.Itoa(e.State.GossipPort)))
		}
	}
	if len(failed) == 0 {
		return ""
	}
	// The table hands the dead over by name, but two entries may share an
	// address: sorted, the seeded choice is the same for the same table
	// whatever the names.
	slices.Sort(failed)
	return failed[rng.IntN(len(failed))]
}
