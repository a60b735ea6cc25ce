package probeplan

import (
	"fmt"
	"math"
	"time"
)

// BudgetConfig caps the bandwidth-probe traffic of each node, so that
// measuring the network never takes much of it from jobs.
// A test moves TestBytes from one node to another, so it costs TestBytes
// on each of the two nodes' links.
type BudgetConfig struct {
	// BytesPerHour is the most test bytes one node may send plus receive
	// per hour; 0 means no cap. Default 1 GiB (about 2.4 Mbit/s on
	// average: a fraction of a percent of a lab's gigabit link).
	BytesPerHour uint64
	// TestBytes is the size of one bandwidth test (--bandwidth-bytes),
	// both directions together: half goes each way.
	// Default 4 MiB: 2 MiB each way, long enough for TCP to leave slow
	// start on a LAN, 84 ms at 200 Mbit/s, 17 ms at 1 Gbit/s.
	TestBytes uint64
	// CycleInterval is how often a bandwidth cycle starts
	// (--bandwidth-interval). Default 5 min, as in seed 002 §4.
	CycleInterval time.Duration
	// CheckBytesPerHour is what the link checks take of BytesPerHour
	// (LinkCheckConfig.BytesPerHour): the cycles get what is left.
	// Default 0 (the agent sets it from its link check).
	CheckBytesPerHour uint64
}

// DefaultBudgetConfig returns the defaults documented on BudgetConfig.
func DefaultBudgetConfig() BudgetConfig {
	return BudgetConfig{
		BytesPerHour:  1 << 30,
		TestBytes:     4 << 20,
		CycleInterval: 5 * time.Minute,
	}
}

// Bounds checked by Validate.
const (
	minTestBytes     = 64 << 10 // smaller transfers measure latency, not bandwidth
	maxTestBytes     = 1 << 30
	minCycleInterval = time.Second
)

// Validate reports the first field out of bounds, naming the bound.
func (c BudgetConfig) Validate() error {
	if c.TestBytes < minTestBytes || c.TestBytes > maxTestBytes {
		return fmt.Errorf("probe budget: TestBytes = %d, want %d..%d", c.TestBytes, minTestBytes, maxTestBytes)
	}
	if c.CycleInterval < minCycleInterval {
		return fmt.Errorf("probe budget: CycleInterval = %s, want >= %s", c.CycleInterval, minCycleInterval)
	}
	if c.BytesPerHour != 0 {
		if need := c.minBytesPerHour(); c.BytesPerHour < need {
			if c.CheckBytesPerHour > 0 {
				return fmt.Errorf("probe budget: BytesPerHour = %d less the link checks' %d allows less than one %d-byte test per node every %s; want 0 (no cap) or >= %d, or check less often",
					c.BytesPerHour, c.CheckBytesPerHour, c.TestBytes, c.CycleInterval, need)
			}
			return fmt.Errorf("probe budget: BytesPerHour = %d allows less than one %d-byte test per node every %s; want 0 (no cap) or >= %d",
				c.BytesPerHour, c.TestBytes, c.CycleInterval, need)
		}
	}
	return nil
}

// cyclesPerHour may be fractional (a 7-minute cycle).
func (c BudgetConfig) cyclesPerHour() float64 {
	return float64(time.Hour) / float64(c.CycleInterval)
}

func (c BudgetConfig) minBytesPerHour() uint64 {
	return uint64(math.Ceil(float64(c.TestBytes)*c.cyclesPerHour())) + c.CheckBytesPerHour
}

// cycleBytesPerHour is what the budget leaves the cycles after the link
// checks; at least 1 under a cap.
func (c BudgetConfig) cycleBytesPerHour() uint64 {
	if c.CheckBytesPerHour >= c.BytesPerHour {
		return 1
	}
	return c.BytesPerHour - c.CheckBytesPerHour
}

// TestsPerCycle is the most tests one node may take part in per cycle
// under the budget, less what the link checks take: math.MaxInt without
// a cap. A budget too small for one
// test (which Validate rejects) still gets one, so that measurements
// never stop altogether.
func (c BudgetConfig) TestsPerCycle() int {
	if c.BytesPerHour == 0 || c.TestBytes == 0 || c.CycleInterval <= 0 {
		return math.MaxInt
	}
	perCycle := float64(c.cycleBytesPerHour()) / c.cyclesPerHour()
	n := math.Floor(perCycle / float64(c.TestBytes))
	if n >= math.MaxInt32 {
		return math.MaxInt
	}
	return max(int(n), 1)
}

// Traffic is what the schedule costs at one cluster size, found by running
// PlanCycle over a simulated hour (see TrafficPerHour).
type Traffic struct {
	Nodes int
	// TestsPerNode is the per-cycle cap PlanCycle applied (n-1 if none).
	TestsPerNode int
	// Rounds is the number of rounds in the first cycle.
	Rounds int
	// MaxBytesPerNodeHour is the busiest node's test bytes over the hour;
	// MeanBytesPerNodeHour the average over nodes.
	MaxBytesPerNodeHour  uint64
	MeanBytesPerNodeHour uint64
	// CyclesToCover is how many cycles it takes, from nothing measured,
	// until every pair has a value; CoverTime is that in wall-clock time.
	CyclesToCover int
	CoverTime     time.Duration
}

// CycleTime estimates how long the rounds of one cycle take if a test
// moves TestBytes at linkBitsPerSec plus a fixed setup cost (connection,
// handshake). Rounds run one after the other; tests within a round run
// at the same time on disjoint nodes.
func (t Traffic) CycleTime(cfg BudgetConfig, linkBitsPerSec float64, setup time.Duration) time.Duration {
	perTest := time.Duration(float64(cfg.TestBytes)*8/linkBitsPerSec*float64(time.Second)) + setup
	return time.Duration(t.Rounds) * perTest
}

// TrafficPerHour simulates the schedule on n nodes under cfg: cycles
// start every CycleInterval, each pair planned is taken as measured in
// its round, and the bytes every node moves are counted. It keeps
// simulating past the hour, if needed, until every pair is measured.
func TrafficPerHour(n int, cfg BudgetConfig) Traffic {
	members := make([]string, n)
	for i := range members {
		members[i] = fmt.Sprintf("node%04d", i)
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	last := make(map[Pair]time.Time)
	bytes := make(map[string]uint64, n)
	tr := Traffic{Nodes: n}
	hourCycles := int(math.Ceil(cfg.cyclesPerHour()))
	for c := 0; c < hourCycles || (tr.CyclesToCover == 0 && c <= n*n); c++ {
		now := t0.Add(time.Duration(c) * cfg.CycleInterval)
		plan := PlanCycle(members, last, cfg, now)
		if c == 0 {
			tr.TestsPerNode, tr.Rounds = plan.TestsPerNode, len(plan.Rounds)
		}
		for r, round := range plan.Rounds {
			for _, p := range round {
				last[p] = now.Add(time.Duration(r+1) * time.Millisecond)
				if c < hourCycles {
					bytes[p.A] += cfg.TestBytes
					bytes[p.B] += cfg.TestBytes
				}
			}
		}
		if tr.CyclesToCover == 0 && len(last) == n*(n-1)/2 {
			tr.CyclesToCover = c + 1
			tr.CoverTime = time.Duration(c+1) * cfg.CycleInterval
		}
	}
	var sum uint64
	for _, b := range bytes {
		sum += b
		tr.MaxBytesPerNodeHour = max(tr.MaxBytesPerNodeHour, b)
	}
	if n > 0 {
		tr.MeanBytesPerNodeHour = sum / uint64(n)
	}
	return tr
}
