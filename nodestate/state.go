package nodestate

import (
	"slices"
	"strconv"
	"strings"
)

// Means is one attribute observed now and averaged over the last 1, 5 and 15
// minutes, as in Table 1 of seed paper 002 (§3.2.1); probe's Tracker
// computes them.
type Means struct {
	Now float64 `json:"now"`
	M1  float64 `json:"1m"`
	M5  float64 `json:"5m"`
	M15 float64 `json:"15m"`
}

// PE is one kind of processing element on a node (seed 001 §III.A): the
// CPUs, a group of identical GPUs, or an accelerator the operator declared.
type PE struct {
	// Kind is lowercase: "cpu", "gpu", or a declared kind such as "fpga".
	Kind string `json:"kind"`
	// Model names the device ("NVIDIA A100-SXM4-40GB"); empty for
	// declared PEs, which shoal cannot see.
	Model string `json:"model,omitempty"`
	// Count is the number of identical devices.
	Count int `json:"count"`
	// MemBytes is the memory of one device in bytes, 0 when unknown.
	MemBytes uint64 `json:"mem,omitempty"`
}

// Static is what a node reads once at start (seed 002 §4, NodeStateD's
// static attributes, plus the PE inventory of seed 001): probe scans the
// host's part, the agent adds what the operator declared.
type Static struct {
	Hostname string  `json:"host"`
	CPUModel string  `json:"cpu,omitempty"`
	Cores    int     `json:"cores"`   // physical cores
	Threads  int     `json:"threads"` // logical CPUs
	MHz      float64 `json:"mhz"`     // nominal (max) clock of one core
	MemTotal uint64  `json:"mem"`     // bytes
	PEs      []PE    `json:"pes,omitempty"`
	// Switch names the rack or switch the node hangs off, when the operator
	// declared one; placement's sequential baseline walks nodes in this order.
	Switch string `json:"sw,omitempty"`
	// Confined is true when the node runs every job attempt in a cgroup of
	// its own; Unconfined says why not. A node that does not
	// confine is never given a job with a memory limit.
	Confined   bool   `json:"cg,omitempty"`
	Unconfined string `json:"ncg,omitempty"`
	// Features are the operator's names for what the node offers
	// (--feature), which a job's --constraint selects on, sorted.
	Features []string `json:"ft,omitempty"`
}

// Dynamic is what a node samples every interval, with running means.
type Dynamic struct {
	Load     Means `json:"load"`
	CPUUtil  Means `json:"cpu"`  // percent
	MemAvail Means `json:"mema"` // bytes
	NetFlow  Means `json:"flow"` // bytes/s in+out, the node's bandwidth tests left out
	// NetRxBytesPerSec and NetTxBytesPerSec are the latest sample's traffic
	// received and sent at the node's interfaces, bytes/s, no means: the
	// "now" of each direction of its link, which placement checks against
	// capacity: over the interval since the previous sample, or, in a sample
	// a shift of the traffic called for, over the moments just before it
	// (probe.RawSample.RecentRx); NetWindowMs says which. Zero when the
	// sampler does not tell directions apart or before two samples. The agent
	// gossips them rounded to the byte (~25 bytes of the broadcast).
	NetRxBytesPerSec float64 `json:"rx,omitempty"`
	NetTxBytesPerSec float64 `json:"tx,omitempty"`
	// NetWindowMs is the span of the window NetRxBytesPerSec and
	// NetTxBytesPerSec cover, milliseconds, ending at SampledAt: the interval
	// since the previous sample, or, in a sample a shift called for, the
	// watch reading that saw it (a fifth of a second at the default
	// interval). The leader reads it to tell a sample taken after one of
	// shoal's attempts ended from one that still holds the attempt's
	// transfers. Zero when unknown, and from agents that predate it: the
	// window is then taken as since the node's previous sample.
	NetWindowMs int64 `json:"win,omitempty"`
	Users       int   `json:"users"`
	// SampledAt is the owner's clock at sampling, in Unix milliseconds.
	SampledAt int64 `json:"at"`
}

// ProbeBeat is a probe process's heartbeat as its node last saw it.
type ProbeBeat struct {
	Kind     string `json:"kind"`
	State    string `json:"state"`
	PID      int    `json:"pid"`
	Restarts int    `json:"restarts"`
	// Beat is the Unix millisecond time of the last heartbeat.
	Beat int64 `json:"beat"`
}

// NetEntry is one cell of the owner's row of the network matrix. Rows do
// not travel in NodeState: the owner sends its row to the servers as a
// NetRow (netrow.go).
type NetEntry struct {
	Peer string `json:"p"`
	// RTT1us and RTT5us are the 1- and 5-minute mean round trips, in
	// microseconds (placement and the network model read milliseconds:
	// the leader divides once, in Snapshot).
	RTT1us float64 `json:"r1,omitempty"`
	RTT5us float64 `json:"r5,omitempty"`
	// AvailMbps and PeakMbps are the pair's available and peak
	// bandwidth, Mbit/s; zero when not measured.
	AvailMbps float64 `json:"bw,omitempty"`
	PeakMbps  float64 `json:"pk,omitempty"`
	// BWAt and RTTAt are the Unix milliseconds of the latest bandwidth
	// and RTT measurement.
	BWAt  int64 `json:"bt,omitempty"`
	RTTAt int64 `json:"rt,omitempty"`

	// Per direction: Out is from the row's owner to Peer, In
	// from Peer to the owner, available (latest test) and peak (fastest
	// seen) in Mbit/s, and the Unix milliseconds of the latest test in
	// that direction (OutAt, InAt); zero when that direction was never
	// measured. AvailMbps keeps meaning "min of the two directions
	// measured" (the one known when only one is) and PeakMbps "the fastest
	// either way", so readers of the undirected fields see no link as
	// better than its worse direction.
	OutMbps     float64 `json:"bo,omitempty"`
	InMbps      float64 `json:"bi,omitempty"`
	PeakOutMbps float64 `json:"po,omitempty"`
	PeakInMbps  float64 `json:"pi,omitempty"`
	OutAt       int64   `json:"bot,omitempty"`
	InAt        int64   `json:"bit,omitempty"`
	// CarriedOutMbps and CarriedInMbps are what the owner's link carried in that
	// direction while the latest test ran, the test included, in Mbit/s
	// (probe.BandwidthResult.Carried): sent for Out, received for In.
	// Zero when the owner did not read its counters. The leader gives a
	// reading back what both ends carried besides the test
	// (leader/stamp.go).
	CarriedOutMbps float64 `json:"co,omitempty"`
	CarriedInMbps  float64 `json:"ci,omitempty"`
}

// RaftInfo is a node's raft standing as it gossips it.
type RaftInfo struct {
	// Member is true once the node has raft state: it was bootstrapped or
	// added by a leader. A cluster with any member never bootstraps again.
	Member bool `json:"m,omitempty"`
	// Proposal is the sorted set of nodes this node would bootstrap with.
	// Nodes bootstrap only when every proposed node proposes the same set.
	Proposal []string `json:"p,omitempty"`

	// The fields below are a server's raft standing, refreshed by the
	// server about once a second (agent/roles.go): clients read the roles
	// and the leader from them, and the leader's autopilot reads the
	// servers' health (agent/autopilot.go).

	// Client is true once the node has settled as a client (a cluster
	// exists and it has no raft state); a raft server that gossips it
	// lost its raft state, and autopilot removes it from raft.
	Client bool `json:"k,omitempty"`
	// Voter is true while the node is a raft voter; Leader while it leads.
	Voter  bool `json:"v,omitempty"`
	Leader bool `json:"l,omitempty"`
	// Term, Index are the node's last raft log term and index; ContactMs
	// is the time since its last contact with the leader, in
	// milliseconds (0 on the leader), when it published them.
	Term      uint64 `json:"t,omitempty"`
	Index     uint64 `json:"i,omitempty"`
	ContactMs int64  `json:"c,omitempty"`
	// Want is, on the leader, the clients it wants to become servers to
	// keep the server target (leader.WantedServers): each of them starts
	// raft and gossips Member, and the leader adds it as a non-voter.
	Want []string `json:"w,omitempty"`
	// Fault says why this server's raft log cannot be written (a full or
	// read-only disk), "" while it can: its copy of the state may be
	// stale, and the leader demotes it from voter until it clears.
	Fault string `json:"f,omitempty"`
}

// NodeState is everything a node tells the cluster about itself. Only the
// owner writes it; everybody else keeps the newest copy.
type NodeState struct {
	Name string `json:"name"`
	// Boot is the owner's start time in Unix nanoseconds. It orders the
	// states of one node across restarts.
	Boot int64 `json:"boot"`
	// Seq grows with every update the owner makes within one boot.
	Seq uint64 `json:"seq"`

	Addr       string `json:"addr"`
	GossipPort int    `json:"gport"`
	RaftPort   int    `json:"rport"`
	HTTPPort   int    `json:"hport"`
	ProbePort  int    `json:"pport,omitempty"`

	// Leaving is set by the owner just before a graceful leave, so peers
	// can tell "left" from "dead": memberlist v0.6.0 hands NotifyLeave a
	// Node whose State field is never updated, so it cannot tell them.
	Leaving bool `json:"leaving,omitempty"`

	// Raft tells peers where this node stands in the raft group, which is
	// what bootstrapping from gossip needs.
	Raft RaftInfo `json:"raft,omitzero"`

	Static Static      `json:"static"`
	Dyn    Dynamic     `json:"dyn"`
	Probes []ProbeBeat `json:"probes,omitempty"`
	// The network row is not here: it grows with the cluster and goes to
	// the servers alone (netrow.go). Older agents' "net", "nv" and "no"
	// keys are ignored on decoding.

	// Coord is the owner's Vivaldi network coordinate (coord.go); nil when
	// the owner runs with coordinates off or has not published one yet.
	Coord *Coord `json:"co,omitempty"`
	// Link is the owner's reading of its own link from its link checks
	// (probeplan.JudgeLink); nil while they agree with its row.
	Link *LinkState `json:"link,omitempty"`
	// Published is the owner's clock, in Unix milliseconds, when it
	// published this Seq: a receiver's now minus Published is how long the
	// change took to reach it (Config.OnPropagation). Older agents send 0.
	Published int64 `json:"pub,omitempty"`
}

// LinkState is a node's link as its link checks read it, when they
// disagree with the figures of its pairs' latest bandwidth tests.
type LinkState struct {
	// Change is "slower" or "faster" (probeplan.LinkChange).
	Change string `json:"change"`
	// Mbps is what the checks read (probeplan.LinkVerdict.Mbps).
	Mbps float64 `json:"mbps"`
	// Since and At are the first and last confirming checks' times, Unix
	// milliseconds on the owner's clock.
	Since int64 `json:"since"`
	At    int64 `json:"at"`
}

// Newer reports whether s is a later version of the same node than o.
func (s *NodeState) Newer(o *NodeState) bool {
	if s.Boot != o.Boot {
		return s.Boot > o.Boot
	}
	return s.Seq > o.Seq
}

// Clone returns a deep copy, so that callers may keep or modify it freely.
func (s *NodeState) Clone() NodeState {
	c := *s
	c.Static.PEs = slices.Clone(s.Static.PEs)
	c.Static.Features = slices.Clone(s.Static.Features)
	c.Probes = slices.Clone(s.Probes)
	c.Raft.Proposal = slices.Clone(s.Raft.Proposal)
	c.Raft.Want = slices.Clone(s.Raft.Want)
	if s.Link != nil {
		l := *s.Link
		c.Link = &l
	}
	if s.Coord != nil {
		co := *s.Coord
		co.Vec = slices.Clone(s.Coord.Vec)
		c.Coord = &co
	}
	return c
}

// RaftAddr is host:port of the node's raft listener (net.JoinHostPort's
// form, brackets around an IPv6 host), "" while either is unknown.
func (s *NodeState) RaftAddr() string {
	if s.Addr == "" || s.RaftPort == 0 {
		return ""
	}
	host := s.Addr
	if strings.IndexByte(host, ':') >= 0 {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(s.RaftPort)
}
