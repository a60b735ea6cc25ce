package leader

import (
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/elastic"
	"github.com/shoal-hpc/shoal/netmodel"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// View is everything one round of the leader decides from: the desired
// state (raft's), the observed state (gossip's, converted by the agent),
// the time and the configuration. The leader's own memory between rounds
// is not in it: that is the Book, passed beside it.
type View struct {
	// Now is the leader's clock for this round.
	Now time.Time
	// State is raft's replicated state. The core only reads it.
	State *raftfsm.State
	// Nodes is what gossip observes, one entry per member.
	Nodes []Node
	// Servers is raft's configuration (membership rounds only).
	Servers []Server
	// Config is the leader's configuration.
	Config Config
	// Done, when closed, ends a long placement early: the agent stopping
	// or leadership lost. Nil never closes.
	Done <-chan struct{}
	// Heard is, per node, the last lease renewal (FenceConfig) this
	// leader answered; nodes it never heard from are absent.
	Heard map[string]Renewal
	// LeadingSince is when this node became leader, on its clock.
	LeadingSince time.Time
}

// Node is what the leader reads of one member: its gossiped entry
// (nodestate.Entry) and, on a server, its network row, in the forms the
// core decides on. NodeOf builds it. The core acts on three liveness
// values (alive, dead, left): any other ("suspect", "unknown") is neither
// alive nor gone.
type Node struct {
	Name   string
	Status nodestate.Status
	// Since is when Status last changed, on the leader's clock.
	Since time.Time
	// HasState is false for a member whose gossiped state has not arrived.
	HasState bool
	// RaftAddr is host:port of the node's raft listener, "" when unknown.
	RaftAddr string
	// Server is true when the node runs raft (gossip's Raft.Member): a
	// server, or a client the leader wanted that started raft.
	Server bool
	// ProbePort is the node's bandwidth probe port, 0 when it runs none.
	ProbePort int
	// Attrs are the node's placement attributes (Table 1 of seed 002).
	// Alive and HeldSlots are left zero: Snapshot sets them from Status
	// and raft.
	Attrs placement.Node
	// Net is the node's row of the network matrix, as the servers hold
	// it (the leader reads RTT1us, the 1-minute mean round trip).
	Net []nodestate.NetEntry
	// Probes are the heartbeats of the node's probe processes. Shared
	// with the gossip table, as Features and Traffic are: read only.
	Probes []nodestate.ProbeBeat
	// Confined is true when the node runs its jobs in cgroups and can
	// enforce a job's memory limit (confine.go).
	Confined bool
	// Features are the node's features, which a job's constraint selects on.
	Features []string
	// Traffic is the node's recent traffic, the samples at which it changed,
	// oldest first; the latest sample is in Attrs (NetRxBytesPerSec,
	// NetTxBytesPerSec). Snapshot reads it to stamp each cross-switch
	// bandwidth test with the traffic that crossed the uplinks meanwhile
	// (stamp.go). Shared with the gossip table: read it, never write it.
	Traffic []nodestate.TrafficPoint
	// SampledAt is when the node took its latest sample, Unix milliseconds on
	// its clock, and NetWindowMs the span before it, in milliseconds, that
	// the sample's traffic (Attrs.NetRxBytesPerSec, NetTxBytesPerSec) covers
	// (nodestate.Dynamic). NetWindowMs is 0 from an agent that does not say:
	// its window is taken as since its previous traffic point.
	SampledAt   int64
	NetWindowMs int64
	// Coord is the node's Vivaldi network coordinate (serf's type, in
	// seconds), converted from its gossiped one by vivaldi.ToSerf; nil when
	// it has none or an invalid one.
	// Snapshot estimates the RTT of pairs without a direct one from it.
	Coord *coordinate.Coordinate
	// Link is the node's reading of its own link from its link checks
	// (nodestate.LinkState); the zero value while they agree with its pairs'
	// latest tests. A change books tests of its pairs (linkRetests) and,
	// for a slower link, caps its older pairs' figures (capChangedLinks).
	Link probeplan.LinkVerdict
}

// Server is one member of raft's configuration.
type Server struct {
	ID    string
	Addr  string
	Voter bool
}

// Config is the leader's part of the agent's configuration.
type Config struct {
	// Self is this node's name: the leader.
	Self string
	// Voters is the target number of raft voters.
	Voters int
	// Servers is the target number of raft servers, voters included
	// (WantedServers); 0 wants none.
	Servers int
	// CoallocTimeout is how long an allocation's nodes have to reserve.
	CoallocTimeout time.Duration
	// JobRetention is how long finished jobs stay; 0 keeps them forever.
	JobRetention time.Duration
	// HistoryRetention is how long the records of purged jobs stay
	// (shoal history); 0 keeps them, up to raftfsm.MaxHistoryRecords.
	HistoryRetention time.Duration
	// Elastic is the elastic decision layer's configuration.
	Elastic elastic.Config
	// Probes configure probe supervision and the bandwidth schedule.
	Probes ProbeConfig
	// PlacementModelWait bounds how long a queued job of a network-aware
	// policy (netload, paper) waits, after its submission, for the
	// network model to cover the nodes it may run on (ModelWait): right
	// after a cluster forms, placement would otherwise choose on a few
	// measured pairs. 0 places at once.
	PlacementModelWait time.Duration
	// FairShareHalfLife is the half-life of the usage the fair-share
	// factor decays; 0 is raftfsm.DefaultHalfLife.
	FairShareHalfLife time.Duration
	// Fence is how long a lost node's attempts wait, after its last
	// lease renewal, before they are retried (fence.go).
	Fence FenceConfig
	// RefusePlacement, a test hook, breaks the allocation proposed for
	// the jobs it selects so that raft refuses it (TestingHooks).
	RefusePlacement func(j *raftfsm.Job) bool
}

// ProbeConfig is what the leader needs of the probe configuration.
type ProbeConfig struct {
	Supervise probeplan.SuperviseConfig
	Budget    probeplan.BudgetConfig
	// RoundLen is the time one round of bandwidth tests is given.
	RoundLen time.Duration
	// BandwidthInterval is how often a full bandwidth cycle starts.
	BandwidthInterval time.Duration
	// Topo bounds the topology planner's tests per node and per switch;
	// the zero value is probeplan.DefaultTopoConfig.
	Topo probeplan.TopoConfig
	// Model tunes switch inference and the model's doubt; the zero value
	// is netmodel.DefaultConfig.
	Model netmodel.Config
	// Settle holds the first bandwidth cycle back until no member has
	// joined for this long and every alive member runs a bandwidth probe
	// (at most 4×Settle after the first member was seen), so that a
	// forming cluster's first cycle, which measures the network model
	// first, includes every node. 0 plans it at once.
	Settle time.Duration
}

// Command is one raft command the leader proposes, in order.
type Command struct {
	// Type and Body are raftfsm's command type and body.
	Type string
	Body any
	// Before is logged (info) when the agent proposes it, After once raft
	// took it, Failed (warn) when raft did not commit it or refused it.
	Before, After, Failed *Note
	// Cycle, when set, is the probe bookkeeping to record in the Book
	// once raft took the command (Book.CycleCommitted).
	Cycle *CycleStart
	// Placement marks the commands of a round's placement: each was
	// decided on a snapshot that counts the placements before it as
	// committed, so once one of them is not taken the agent proposes none
	// of the rest, and the next round decides them again.
	Placement bool
	// Explain, on a PlaceJob, is placement's breakdown of the decision:
	// the groups it compared and why the winner won. The agent keeps it
	// for the dashboard once raft took the command; raft never sees it.
	Explain *placement.Breakdown
}

// Note is one log line the agent writes about a decision.
type Note struct {
	Msg   string
	Attrs []any
}

func note(msg string, attrs ...any) *Note { return &Note{Msg: msg, Attrs: attrs} }
