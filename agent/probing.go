package agent

import (
	"crypto/tls"

	"github.com/shoal-hpc/shoal/agent/probes"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/tlsca"
)

// probeKey derives the key that authenticates the probe port.
func probeKey(token string) []byte { return derive(token, "probe") }

// startProbes starts the node side of the probes (agent/probes: the first
// sample, the probe server, the probe processes, the bandwidth duties,
// the link checks);
// the leader side is the leader core's (leader.Probes, run by leading.go).
func (a *Agent) startProbes() {
	g := a.gossip
	a.probes = probes.New(probes.Deps{
		Config: a.cfg.Probes, Node: a.cfg.Name, BindAddr: a.cfg.BindAddr, Bin: a.cfg.Bin,
		SampleInterval: a.cfg.SampleInterval, Sampler: a.cfg.Sampler, Key: probeKey(a.cfg.Token),
		ServerTLS: tlsca.ServerConfig(a.tls.roots, a.tls.leaf, tls.NoClientCert), CAPEM: a.tls.caPEM(),
		Gossip: a.gossip, State: a.fsm, Now: a.clock, Log: a.log,
		PublishRow: a.rows.sender.Set,
		PublishDynamic: func(d nodestate.Dynamic) {
			g.Update(func(st *nodestate.NodeState) { st.Dyn = gossiped(d) })
		},
	})
	a.probes.Start(a.loops.ctx)
	a.loops.run("probes", a.probes.Run)
	a.loops.run("probe-duties", a.probes.RunDuties)
	a.loops.run("link-checks", a.probes.RunLinkChecks)
}

// ProbePort is the bound probe port, 0 when the server did not start.
func (a *Agent) ProbePort() int { return a.probes.Port() }
