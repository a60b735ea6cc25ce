package leader

import (
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/vivaldi"
)

// NodeOf is the leader's reading of one gossiped entry and the network
// row a server holds for it (nil when none): the one place the observed
// state becomes the core's Node. The entry's traffic is shared, not
// copied: the gossip table never writes a step it handed out.
func NodeOf(e nodestate.Entry, net []nodestate.NetEntry) Node {
	s := &e.State
	n := Node{Name: s.Name, Status: e.Status, Since: e.Since, HasState: e.HasState,
		RaftAddr: s.RaftAddr(), Server: s.Raft.Member, ProbePort: s.ProbePort, Confined: s.Static.Confined, Features: s.Static.Features,
		Attrs: placement.Node{Name: s.Name, Switch: s.Static.Switch, Cores: s.Static.Cores, Threads: s.Static.Threads,
			MHz: s.Static.MHz, MemTotal: s.Static.MemTotal, Load: s.Dyn.Load, CPUUtil: s.Dyn.CPUUtil,
			MemAvail: s.Dyn.MemAvail, NetFlow: s.Dyn.NetFlow, Users: s.Dyn.Users,
			NetRxBytesPerSec: s.Dyn.NetRxBytesPerSec, NetTxBytesPerSec: s.Dyn.NetTxBytesPerSec, PEs: slices.Clone(s.Static.PEs)},
		Net: net, Probes: s.Probes, Traffic: e.Traffic, SampledAt: s.Dyn.SampledAt, NetWindowMs: s.Dyn.NetWindowMs,
		Coord: vivaldi.ToSerf(s.Coord), Link: linkVerdict(s.Link)}
	return n
}

// linkVerdict is a node's gossiped link state as the probe planner's
// verdict; the zero verdict for none or an unknown change.
func linkVerdict(l *nodestate.LinkState) probeplan.LinkVerdict {
	if l == nil {
		return probeplan.LinkVerdict{}
	}
	c := probeplan.LinkChange(l.Change)
	if c != probeplan.LinkSlower && c != probeplan.LinkFaster {
		return probeplan.LinkVerdict{}
	}
	return probeplan.LinkVerdict{Change: c, Mbps: l.Mbps, Since: time.UnixMilli(l.Since), At: time.UnixMilli(l.At)}
}
