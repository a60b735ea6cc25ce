package placement

import (
	"fmt"
	"math"
	"strings"
)

// Defaults of the request fields (seed 002 §5 and DESIGN.md).
const (
	DefaultAlpha = 0.3  // weight of compute load in T (miniMD's setting in seed 002 §5)
	DefaultWLT   = 0.25 // latency weight in NL
	DefaultWBW   = 0.75 // bandwidth weight in NL
	// DefaultLoadThreshold is the overload bound in load per logical core: above 1.0
	// every logical core already has a runnable process, so a new rank only time-shares.
	DefaultLoadThreshold = 1.0
	// MaxProcs bounds n so that a typo cannot make a placement run for minutes.
	MaxProcs = 1 << 20
	// OracleMaxNodes bounds the exhaustive oracle (2^n subsets).
	OracleMaxNodes = 20
)

// Policy names.
const (
	PolicyNetload    = "netload"
	PolicyPaper      = "paper"
	PolicyRandom     = "random"
	PolicySequential = "sequential"
	PolicyLoad       = "load"
	policyOracle     = "oracle"
)

// ReadsNetwork reports whether a policy places by the network model
// (netload, the default when policy is empty, and the paper's): the
// policies that wait for the model on a cluster that has just formed.
func ReadsNetwork(policy string) bool {
	return policy == "" || policy == PolicyNetload || policy == PolicyPaper
}

// Relaxation modes (seed 000, Table II).
const (
	RelaxNone    = "none"
	RelaxLoc     = "loc"
	RelaxDist    = "dist"
	RelaxLocDist = "loc+dist"
	RelaxAll     = "all"
)

// DefaultAttrWeights returns seed 002 §5's weights: load 0.3, utilisation 0.2,
// node flow 0.2, used memory 0.1, logical cores 0.1, clock 0.05, total memory 0.05.
// Users is in Table 1 but §5 gives it no weight.
func DefaultAttrWeights() AttrWeights {
	return AttrWeights{
		Load: 0.3, CPUUtil: 0.2, NetFlow: 0.2, MemAvail: 0.1,
		Cores: 0.1, MHz: 0.05, MemTotal: 0.05,
		M1: 1.0 / 3, M5: 1.0 / 3, M15: 1.0 / 3,
	}
}

// DefaultRequest returns the request `shoal alloc -n n` sends: netload policy,
// GERBIL's default relaxation, oversubscription on.
func DefaultRequest(n int) Request {
	return Request{N: n, Policy: PolicyNetload, Oversubscribe: true}
}

// normalized returns r with defaults filled in, or an error naming the broken field.
func (r Request) normalized() (Request, error) {
	bad := func(format string, a ...any) (Request, error) {
		return r, fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, a...))
	}
	r.Policy = strings.ToLower(strings.TrimSpace(r.Policy))
	if r.Policy == "" {
		r.Policy = PolicyNetload
	}
	switch r.Policy {
	case PolicyNetload, PolicyPaper, PolicyRandom, PolicySequential, PolicyLoad, policyOracle:
	default:
		return bad("policy %q: want netload, paper, random, sequential or load", r.Policy)
	}
	r.Relax = strings.ToLower(strings.ReplaceAll(r.Relax, " ", ""))
	if r.Relax == "" {
		r.Relax = RelaxAll
		if len(r.Hostfile) > 0 {
			r.Relax = RelaxNone
		}
	}
	switch r.Relax {
	case RelaxAll:
	case RelaxNone, RelaxLoc, RelaxDist, RelaxLocDist:
		if len(r.Hostfile) == 0 {
			return bad("relax %q needs a hostfile", r.Relax)
		}
	default:
		return bad("relax %q: want none, loc, dist, loc+dist or all", r.Relax)
	}
	if r.N < 0 {
		return bad("n = %d: must be > 0", r.N)
	}
	if r.PPN < 0 {
		return bad("ppn = %d: must be >= 0", r.PPN)
	}
	if r.CPUsPerProc < 0 {
		return bad("cpus per process = %d: must be >= 0", r.CPUsPerProc)
	}
	// Every count is bounded before it is summed, and the sum stops at the bound, so no total
	// can wrap around: a hostfile of huge counts whose sum overflows to a small n used to pass
	// here and hand raft hosts of 2^62 processes.
	total := 0
	for i, h := range r.Hostfile {
		if h.Host == "" || h.Slots <= 0 || h.Slots > MaxProcs {
			return bad("hostfile entry %d (%q, %d slots): need a host and slots in [1,%d]", i+1, h.Host, h.Slots, MaxProcs)
		}
		if total += h.Slots; total > MaxProcs {
			return bad("hostfile holds more than %d slots: at most %d processes per job", MaxProcs, MaxProcs)
		}
	}
	if r.N == 0 {
		r.N = total
		if r.N == 0 {
			return bad("n = 0: must be > 0")
		}
	}
	// Checked after n is filled in from the hostfile: every loop over processes is bounded by it.
	if r.N > MaxProcs {
		return bad("n = %d: at most %d", r.N, MaxProcs)
	}
	if !finiteNonNeg(r.Alpha) || r.Alpha > 1 {
		return bad("alpha = %v: must be in [0, 1] (0 = default %v)", r.Alpha, DefaultAlpha)
	}
	if r.Alpha == 0 {
		r.Alpha = DefaultAlpha
	}
	if !finiteNonNeg(r.WLT) || !finiteNonNeg(r.WBW) {
		return bad("w_lt = %v, w_bw = %v: must be finite and >= 0", r.WLT, r.WBW)
	}
	if r.WLT == 0 && r.WBW == 0 {
		r.WLT, r.WBW = DefaultWLT, DefaultWBW
	}
	if !finiteNonNeg(r.LoadThreshold) {
		return bad("load threshold = %v: must be finite and >= 0", r.LoadThreshold)
	}
	if r.LoadThreshold == 0 {
		r.LoadThreshold = DefaultLoadThreshold
	}
	w := DefaultAttrWeights()
	if r.Attr != nil {
		w = *r.Attr
	}
	if err := w.validate(); err != nil {
		return r, err
	}
	r.Attr = &w
	for i, p := range r.PEs {
		if strings.TrimSpace(p.Kind) == "" || p.PerProc < 0 {
			return bad("pe need %d (%q:%d): need a kind and per-process count >= 0", i+1, p.Kind, p.PerProc)
		}
	}
	return r, nil
}

func (w *AttrWeights) validate() error {
	all := []float64{w.Load, w.CPUUtil, w.NetFlow, w.MemAvail, w.Cores, w.MHz, w.MemTotal, w.Users, w.Now, w.M1, w.M5, w.M15}
	for _, v := range all {
		if !finiteNonNeg(v) {
			return fmt.Errorf("%w: attribute weight %v: must be finite and >= 0", ErrInvalidRequest, v)
		}
	}
	if w.Now+w.M1+w.M5+w.M15 == 0 {
		w.M1, w.M5, w.M15 = 1.0/3, 1.0/3, 1.0/3
	}
	return nil
}

// finiteNonNeg: two comparisons, false for NaN (every comparison is), -Inf
// and negatives (below 0) and +Inf (above the largest float).
func finiteNonNeg(v float64) bool { return v >= 0 && v <= math.MaxFloat64 }

func finiteNonNeg32(v float32) bool { return v >= 0 && v <= math.MaxFloat32 }
