package agent

import (
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// jobKey names one attempt of one job.
// TODO(#20 merge): the HTTP room may name jobrun.Key itself.
type jobKey = jobrun.Key

// jobState is the agent's own bookkeeping of jobs; the node side of jobs
// keeps its own in jobrun.Node.
type jobState struct {
	el elasticState // elastic jobs: options, progress committed
}

// newJobNode builds the node side of jobs (agent/jobrun) from the agent's
// configuration and the parts it needs: the replicated state, proposals,
// gossip's addresses and the job capability. Called once raft has started.
func (a *Agent) newJobNode() (*jobrun.Node, error) {
	self, name, g := a.self, a.cfg.Name, a.gossip
	return jobrun.New(jobrun.Config{
		Name: a.cfg.Name, DataDir: a.cfg.DataDir, Bin: a.cfg.Bin,
		LocalAddr: "https://" + loopbackOr(a.cfg.BindAddr) + ":" + strconv.Itoa(a.HTTPPort()),
		Socket:    a.SocketPath(), CAFile: a.caFile(), CACerts: a.caCerts(),
		JobLimits: a.cfg.JobLimits, NeverAck: a.cfg.Testing.NeverAck,
		Cgroups: a.cgroups, CgroupsOff: a.cgroupsOff,
	}, jobrun.Deps{
		Log: a.log, Now: time.Now, State: a.fsm, Applied: a.appliedJobs, Propose: a.Apply,
		HTTPAddrOf: a.httpAddrOf, PeerClient: a.peerClient, StreamClient: a.streamClient,
		NodeStatus: func(node string) (string, bool) {
			e, ok := g.Node(node)
			return string(e.Status), ok
		},
		JobCapability:     a.jobCapability,
		MayRunAs:          func(owner string) error { return notRootRefusal(self, name, owner) },
		ResizeSignalEvery: func() time.Duration { return a.elasticOptions().SignalEvery },
		Prune:             a.pruneProgressMarks,
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
	a.leaderHooks = append(a.leaderHooks, a.syncLimits)
	a.goLoop("jobs", a.jobNode.Run)
}

// pruneProgressMarks drops the progress marks (elastic_progress.go) of
// attempts that have ended; the job node runs it with its own pruning.
func (a *Agent) pruneProgressMarks() {
	a.jobs.el.mu.Lock()
	reported := make([]jobKey, 0, len(a.jobs.el.reported))
	for k := range a.jobs.el.reported {
		reported = append(reported, k)
	}
	a.jobs.el.mu.Unlock()
	var ended []jobKey
	a.fsm.View(func(s *raftfsm.State) {
		for _, k := range reported {
			if jobrun.AttemptEndedIn(s, k) {
				ended = append(ended, k)
			}
		}
	})
	a.jobs.el.mu.Lock()
	for _, k := range ended {
		delete(a.jobs.el.reported, k)
	}
	a.jobs.el.mu.Unlock()
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
	a.jobs.el.mu.Lock()
	out["reported"] = len(a.jobs.el.reported)
	a.jobs.el.mu.Unlock()
	return out
}

// The HTTP handlers' ways into the job node.
// TODO(#20 merge): the HTTP room's backend may call a.jobNode directly.
