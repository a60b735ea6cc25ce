package agent

import (
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
)

// newJobNode builds the node side of jobs (agent/jobrun) from the agent's
// configuration and the parts it needs: the replicated state, the applier,
// the peers, the job capability key and the elastic settings. Called once
// raft has started.
func (a *Agent) newJobNode() (*jobrun.Node, error) {
	self, name, g, el := a.self, a.cfg.Name, a.gossip, a.elastic
	return jobrun.New(jobrun.Config{
		Name: a.cfg.Name, DataDir: a.cfg.DataDir, Bin: a.cfg.Bin,
		LocalAddr: "https://" + loopbackOr(a.cfg.BindAddr) + ":" + strconv.Itoa(a.HTTPPort()),
		Socket:    a.SocketPath(), CAFile: caFile(a.cfg.DataDir), CACerts: a.tls.caCerts(),
		JobLimits: a.cfg.JobLimits, NeverAck: a.cfg.Testing.NeverAck, GPUs: gpuCount(a.static.PEs),
		CUDAIDs:    probe.CUDADeviceIDs(a.static.GPUs),
		GPUDevices: a.gpuDevices(gpuCount(a.static.PEs)),
		Cgroups:    a.cgroups, CgroupsOff: a.cgroupsOff, Lease: a.cfg.Fence.Lease,
	}, jobrun.Deps{
		Log: a.log, Now: time.Now, State: a.fsm, Applied: a.appliedJobs, Propose: a.batcher.Apply,
		HTTPAddrOf: a.peers.addrOf, PeerClient: a.peers.client, StreamClient: a.peers.stream,
		NodeStatus: func(node string) (string, bool) {
			e, ok := g.Node(node)
			return string(e.Status), ok
		},
		JobCapability:     jobCapabilities(capabilityKey(a.cfg.Token)),
		MayRunAs:          func(owner string) error { return notRootRefusal(self, name, owner) },
		ResizeSignalEvery: func() time.Duration { return el.get().SignalEvery },
		Prune:             a.progress.prune,
		Settle:            a.progress.settle,
		RenewLease:        a.renewLease,
	})
}

// loopbackOr is the address local processes reach a listener bound to bind at.
func loopbackOr(bind string) string {
	if bind == "0.0.0.0" || bind == "::" || bind == "" {
		return "127.0.0.1"
	}
	return bind
}

// startJobs starts this node's job reconciler and registers the leader's
// limit sync (the leader's job scheduling is a duty of leading.go).
func (a *Agent) startJobs() {
	a.leaderHooks = append(a.leaderHooks, limitSync(a.fsm, a.applier.Apply, a.cfg.Limits, a.log))
	a.loops.run("jobs", a.jobNode.Run)
}

// JobPIDs lists the process-group leaders this node runs for a job, any
// attempt; tests use it to check that a kill reached every rank.
func (a *Agent) JobPIDs(job uint64) []int {
	if a.jobNode == nil {
		return nil
	}
	return a.jobNode.PIDs(job)
}

// BookkeepingSizes reports how many entries the agent's per-job maps hold, by map; tests use
// it to check that they stay bounded by the live jobs.
func (a *Agent) BookkeepingSizes() map[string]int {
	out := map[string]int{}
	if a.jobNode != nil {
		out = a.jobNode.BookkeepingSizes()
	}
	out["reported"] = 0
	if a.progress != nil {
		out["reported"] = a.progress.size()
	}
	return out
}

// gpuCount is how many GPUs the node's inventory holds, every model
// together: the devices it numbers 0.. and binds to attempts.
func gpuCount(pes []nodestate.PE) int {
	n := 0
	for _, pe := range pes {
		if pe.Kind == "gpu" {
			n += pe.Count
		}
	}
	return n
}
