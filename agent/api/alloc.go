package api

import (
	"context"
	"net/http"
	"time"
)

// AllocRequest is POST /v1/alloc (`shoal alloc`): where would N processes
// go right now? Nothing is reserved. Zero values take the agent's defaults;
// the agent converts this to the placement package's request at the HTTP
// boundary, so the placement package's field names are not a user contract.
type AllocRequest struct {
	NP  int `json:"np"`
	PPN int `json:"ppn,omitempty"` // processes per node; 0 = what each node has free
	// CPUsPerRank is the cores each process takes (a job's --cpus-per-rank); 0 = 1.
	CPUsPerRank int `json:"cpus_per_rank,omitempty"`
	// Policy: "netload" (default when ""), "paper", "random", "sequential", "load".
	Policy string `json:"policy,omitempty"`
	// Relax is GERBIL's relaxation mode: "none", "loc", "dist", "loc+dist", "all".
	Relax         string      `json:"relax,omitempty"`
	Hostfile      []HostSlots `json:"hostfile,omitempty"`
	Oversubscribe bool        `json:"oversubscribe"`
	PEs           []PENeed    `json:"pes,omitempty"`
	// Alpha weighs compute load against network load; 0 = the cluster's setting.
	Alpha float64 `json:"alpha,omitempty"`
	// WLT and WBW weigh latency and bandwidth in the network load; both 0 = defaults.
	WLT float64 `json:"w_lt,omitempty"`
	WBW float64 `json:"w_bw,omitempty"`
	// Attr are the compute-load attribute weights; nil = the defaults.
	Attr *AttrWeights `json:"attr,omitempty"`
	Seed int64        `json:"seed,omitempty"` // seeds the random and sequential policies
	// LoadThreshold is the overload bound on load per logical core; 0 = the default.
	LoadThreshold float64 `json:"load_threshold,omitempty"`
	Force         bool    `json:"force,omitempty"`
	// ModelWaitedMs is how long the client has already waited for the
	// network model (it asks again while the answer says ModelWait): the
	// agent's --placement-model-wait bounds the wait from the first ask.
	ModelWaitedMs int64 `json:"model_waited_ms,omitempty"`
	// NoModelWait places at once, on whatever the model covers.
	NoModelWait bool `json:"no_model_wait,omitempty"`
}

// AttrWeights are the compute-load weights of the node attributes and of
// each running-mean horizon (`shoal alloc --weight`).
type AttrWeights struct {
	Load     float64 `json:"load"`
	CPUUtil  float64 `json:"cpu_util"`
	NetFlow  float64 `json:"net_flow"`
	MemAvail float64 `json:"mem_avail"`
	Cores    float64 `json:"cores"`
	MHz      float64 `json:"mhz"`
	MemTotal float64 `json:"mem_total"`
	Users    float64 `json:"users"`
	Now      float64 `json:"now"`
	M1       float64 `json:"1m"`
	M5       float64 `json:"5m"`
	M15      float64 `json:"15m"`
}

// AllocDecision answers POST /v1/alloc: exactly one of Hosts (possibly
// degraded) or Wait is set.
type AllocDecision struct {
	Hosts          []JobHost  `json:"hosts"`
	Degraded       bool       `json:"degraded"`
	DegradedReason string     `json:"degraded_reason,omitempty"`
	Wait           bool       `json:"wait"`
	WaitReason     string     `json:"wait_reason,omitempty"`
	Score          AllocScore `json:"score"`
	// ModelWait (with Wait) means: ask again shortly, the network model
	// does not cover the nodes yet (WaitReason says how much it does)
	// and the agent's --placement-model-wait has not passed.
	ModelWait bool `json:"model_wait,omitempty"`
	// ModelCoverage is the network model's coverage of the nodes when a
	// network-aware policy answered, e.g. "10 of 10 nodes measured".
	ModelCoverage string `json:"model_coverage,omitempty"`
}

// AllocScore says why a group of nodes was chosen: T = alpha*c_norm +
// beta*n_norm, comparable across policies for one request.
type AllocScore struct {
	Policy string           `json:"policy"`
	Relax  string           `json:"relax"`
	Nodes  []AllocNodeScore `json:"nodes"`
	C      float64          `json:"c"` // sum of compute load over the hosts
	N      float64          `json:"n"` // sum of network load over host pairs
	CRef   float64          `json:"c_ref"`
	NRef   float64          `json:"n_ref"`
	CNorm  float64          `json:"c_norm"`
	NNorm  float64          `json:"n_norm"`
	Alpha  float64          `json:"alpha"`
	Beta   float64          `json:"beta"`
	T      float64          `json:"t"`
	// PaperT is the paper's Eq. 4 over its own candidates (paper policy only).
	PaperT        float64 `json:"paper_t"`
	MeanAvailMbps float64 `json:"mean_avail_mbps"`
	Pairs         int     `json:"pairs"`
	MeasuredPairs int     `json:"measured_pairs"`
	Candidates    int     `json:"candidates"` // groups the policy evaluated
	// PairScores lists each pair of a group of at most 16 nodes.
	PairScores []AllocPairScore `json:"pair_scores,omitempty"`
	// Considered are the best groups the policy compared, by T, the
	// chosen one among them; Why says in a sentence why it won.
	Considered []AllocCandidate `json:"considered,omitempty"`
	Why        string           `json:"why,omitempty"`
}

// AllocCandidate is one group a policy compared: its compute and network
// costs, their normalised terms and its T.
type AllocCandidate struct {
	Nodes  []string `json:"nodes"`
	C      float64  `json:"c"`
	N      float64  `json:"n"`
	CNorm  float64  `json:"c_norm"`
	NNorm  float64  `json:"n_norm"`
	T      float64  `json:"t"`
	Chosen bool     `json:"chosen"`
}

// Placement is GET /v1/jobs/{id}/placement: why the leader that placed
// the job's latest attempt chose its nodes. Only that leader knows (the
// reasons are not replicated); after a leader change the endpoint answers
// 404 for the placements made before it.
type Placement struct {
	Job      uint64     `json:"job"`
	Attempt  int        `json:"attempt"`
	PlacedAt time.Time  `json:"placed_at"`
	Leader   string     `json:"leader"`
	Score    AllocScore `json:"score"`
}

// AllocPairScore is what one pair of the chosen hosts offers: the worse
// direction's Mbit/s a job would get now (0 when unmeasured) and its
// network cost before T's reference.
type AllocPairScore struct {
	A         string  `json:"a"`
	B         string  `json:"b"`
	OfferMbps float64 `json:"offer_mbps"`
	Measured  bool    `json:"measured"`
	Cost      float64 `json:"cost"`
}

// AllocNodeScore explains one chosen host.
type AllocNodeScore struct {
	Node  string  `json:"node"`
	CL    float64 `json:"cl"`    // compute load
	Slots int     `json:"slots"` // free slots the policy counted
	Procs int     `json:"procs"`
}

// Alloc asks where r's processes would go now; nothing is reserved.
func (c *Client) Alloc(ctx context.Context, r AllocRequest) (AllocDecision, error) {
	var out AllocDecision
	return out, c.Do(ctx, http.MethodPost, "/v1/alloc", r, &out)
}
