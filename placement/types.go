package placement

import (
	"github.com/shoal-hpc/shoal/alloc"
	"github.com/shoal-hpc/shoal/internal/pairmodel"
	"github.com/shoal-hpc/shoal/nodestate"
)

// Node is one machine as the agent sees it right now.
type Node struct {
	Name  string
	Alive bool
	// Switch is the declared topology group (rack or switch), "" when not declared.
	// It orders the sequential baseline and a decision's hosts (rank order:
	// a switch's nodes together) and estimates unmeasured links.
	Switch string

	Cores, Threads int     // physical cores; logical cores (0 = same as Cores)
	MHz            float64 // clock
	MemTotal       uint64  // bytes

	// The running means of Table 1 (seed 002 §3.2.1), as the node
	// gossips them.
	Load     nodestate.Means // load average (runnable processes)
	CPUUtil  nodestate.Means // percent, 0-100
	MemAvail nodestate.Means // bytes
	NetFlow  nodestate.Means // bytes/s in+out at the node's interfaces
	// NetRxBytesPerSec and NetTxBytesPerSec are the latest sample's traffic
	// received and sent, bytes/s: the "now" of each direction of the node's
	// link, which netload takes off what a pair offers (network.go). 0: none
	// measured (an idle link, or a sampler that does not tell them apart).
	NetRxBytesPerSec, NetTxBytesPerSec float64

	Users     int
	PEs       []nodestate.PE
	HeldSlots int // slots already held by running shoal jobs
}

// Link is one measured (or estimated) path between two nodes. Links may be
// missing or measured in one direction only; see the package doc for how
// gaps are filled.
type Link struct {
	From, To string
	// RTTus is the round trip, µs, as the rows measure it
	// (nodestate.NetEntry.RTT1us); 0: none.
	RTTus               float64
	AvailMbps, PeakMbps float64
	Measured            bool // false: an estimate; treated as missing
	// Derived marks a figure of the network model (netmodel: node links
	// and switch pairs), not a direct test of this pair. The leader sets
	// Measured with it, so placement uses it like a measurement; shown
	// apart where a user reads links.
	Derived bool

	// Per direction, Mbit/s, 0 = that direction not measured:
	// OutMbps is the available bandwidth From->To at the latest test,
	// InMbps To->From, PeakOutMbps and PeakInMbps the fastest seen each
	// way. AvailMbps stays the worse direction and PeakMbps the faster
	// one, so a reader of those alone never sees a link as better than
	// its worse direction; netload reads the directions when they are set.
	// float32: a rate has fewer significant digits than that, and a
	// 1,000-node snapshot's million links are 24 MB smaller to read.
	OutMbps, InMbps         float32
	PeakOutMbps, PeakInMbps float32
	// RTTEstimated: RTTus comes from the two nodes' network coordinates
	// (Vivaldi), not from direct pings.
	RTTEstimated bool
}

// Snapshot is the input of every placement: the nodes and the links between them.
type Snapshot struct {
	Nodes []Node
	Links []Link
	// Model, when set, derives more links after Links: the network
	// model's figures for the pairs without a direct test (the leader
	// copies netmodel's tables here). ~500,000 pairs at
	// 1,000 nodes: as Links they were 40 MB of names per placement to
	// build, scan and look up; placement derives them as it reads them.
	Model *PairModel
}

// PairModel derives links by node position in Snapshot.Nodes, in order:
// for i < j, pair (i, j) is a link Nodes[i] -> Nodes[j] (Measured,
// Derived, no directions) when it has no direct bandwidth test (Direct),
// Known[i] and Known[j], Sw[i], Sw[j] >= 0 and SwOK[Sw[i]*NS+Sw[j]]. Its
// available and peak rates are the smaller of the two nodes' (Avail,
// Peak) and, across switches, at most the switch pair's (SwAvail, SwPeak);
// its RTT is the pair's direct one, else SwRTTus. They are netmodel's
// tables (netmodel.Model.Tables), the same type, with the one
// implementation of the rule (internal/pairmodel); positions are into
// Nodes, so whoever drops or reorders nodes must rebuild them.
type PairModel = pairmodel.Tables

// PairDirect is pair (i, J) measured directly: BW when by a bandwidth
// test (then not derived), RTTus > 0 its direct RTT (µs).
type PairDirect = pairmodel.Direct

// PENeed asks for PerProc elements of Kind for every process (e.g. gpu:1).
// PerProc 0 means "the node must have at least one" without a per-process
// cap. It is alloc.PENeed, the type a stored job spec holds.
type PENeed = alloc.PENeed

// HostSlots is one line of a hostfile. It is alloc.HostSlots, the type a
// stored job spec holds.
type HostSlots = alloc.HostSlots

// Request is one job's placement question. Zero values mean defaults as documented
// per field; DefaultRequest returns a request with the CLI's defaults.
type Request struct {
	N   int // processes; 0 with a hostfile = the hostfile's total
	PPN int // processes per node; overrides the effective processor count pc_v (0 = use pc_v)
	// CPUsPerProc is the cores each process takes (--cpus-per-rank): a node's free cores
	// hold pc_v / CPUsPerProc processes. 0 = 1.
	CPUsPerProc int `json:",omitempty"`

	// Policy: "netload" (default when ""), "paper", "random", "sequential", "load".
	Policy string
	// Relax is GERBIL's relaxation mode (seed 000, Table II): "none", "loc", "dist",
	// "loc+dist", "all". "" means "all" without a hostfile and "none" with one.
	Relax    string
	Hostfile []HostSlots
	// Oversubscribe places more processes than free slots (Decision.Degraded) instead
	// of answering Wait. GERBIL and the CLI default it to on; the zero Request has it off.
	Oversubscribe bool
	PEs           []PENeed

	Alpha    float64      // weight of compute load in T; 0 = 0.3; beta = 1 - alpha
	WLT, WBW float64      // weights of the latency and bandwidth terms in NL; both 0 = 0.25/0.75
	Attr     *AttrWeights // nil = DefaultAttrWeights()
	Seed     int64        // seeds the random and sequential baselines

	// LoadThreshold is the overload bound on load per logical core; 0 = DefaultLoadThreshold.
	// When every candidate node is above it the decision is Wait, unless Force.
	LoadThreshold float64
	Force         bool

	// Done, when closed, stops the placement early with ErrCanceled (the API
	// closes it when its client goes away). nil: never. Not part of the JSON form.
	Done <-chan struct{} `json:"-"`
	// MaxSteps caps the work of one placement, in steps (a process filled, a
	// candidate node scanned, an oracle subset); past it Place returns
	// ErrStepBudget. 0: no cap beyond the bounds on n and the snapshot.
	MaxSteps int `json:"-"`
}

// AttrWeights are the SAW weights of Eq. 1 over the Table-1 attributes, and the
// weights of each running-mean horizon within a time-varying attribute.
type AttrWeights struct {
	Load, CPUUtil, NetFlow, MemAvail float64 // time-varying; MemAvail is DESIGN's "used memory" weight
	Cores, MHz, MemTotal, Users      float64 // static (Users is a snapshot count)
	// Horizon weights of Now, M1, M5, M15 for the time-varying attributes; they are
	// rescaled to sum to 1. All zero = 0, 1/3, 1/3, 1/3 (the paper's 1/5/15-min means).
	Now, M1, M5, M15 float64
}

// Host is one launch unit: all of a job's processes on one node. It is
// alloc.Host, the type the replicated state stores an attempt's hosts in,
// so a decision is stored without conversion.
type Host = alloc.Host

// Decision is the answer of Place. Exactly one of Hosts (possibly Degraded) or Wait is set.
type Decision struct {
	Hosts          []Host
	Degraded       bool
	DegradedReason string
	Wait           bool
	WaitReason     string
	Score          Breakdown
}

// NodeScore explains one chosen host.
type NodeScore struct {
	Node  string
	CL    float64 // compute load, Eq. 1
	Slots int     // free slots the policy counted (pc_v, PPN, PE cap)
	NP    int
}

// PairScore is what one pair of a chosen group offers in placement's view.
type PairScore struct {
	A, B string
	// OfferMbps is what a job would get between them, the worse direction
	// (direction.go); 0 when the pair is not measured.
	OfferMbps float64
	Measured  bool
	Cost      float64 // NL of the pair, T's network term before N_ref
}

// Breakdown says why a group was chosen. T is comparable across policies for one
// snapshot and request: T = Alpha*CNorm + Beta*NNorm with CNorm = C/CRef and
// NNorm = N/NRef, where the references are the costs of an average group of the
// same size (C: the mean node's; N: the median measured pair's, so that a few very
// slow pairs do not make every other group look alike), so a random group scores
// about 1.
type Breakdown struct {
	Policy, Relax string
	Nodes         []NodeScore
	C, N          float64 // sum of CL over hosts; sum of NL over host pairs
	CRef, NRef    float64
	CNorm, NNorm  float64
	Alpha, Beta   float64
	T             float64
	// PaperT is Eq. 4 for the chosen group, normalised over the paper's candidate
	// set (paper policy only; 0 otherwise).
	PaperT float64
	// MeanAvailMbps is the mean available bandwidth over the measured host pairs.
	MeanAvailMbps        float64
	Pairs, MeasuredPairs int
	Candidates           int // groups the policy evaluated
	// PairScores lists every pair of the group when it has at most
	// explainPairsMax nodes (nil otherwise): what each offers and costs,
	// so a placement can be read pair by pair.
	PairScores []PairScore
	// Considered are the best groups the policy compared, the chosen one
	// among them, by T: at most explainCandidatesMax. Policies that compare
	// no groups (random, sequential, load, a fixed hostfile) list only the
	// chosen group.
	Considered []Candidate
}

// Candidate is one group a policy compared, with the terms of its T.
type Candidate struct {
	Nodes        []string
	C, N         float64 // compute and network costs, as Breakdown's
	CNorm, NNorm float64
	T            float64
	Chosen       bool
}

// QueuedJob is one job waiting in the queue, as NextJob sees it.
type QueuedJob struct {
	ID       uint64
	Priority int    // higher first
	Seq      uint64 // FCFS order: lower first
	NeedsPE  string // "" or a PE kind, e.g. "gpu"
}
