package elastic

import (
	"fmt"
	"math"
	"time"
)

// Input is everything the decision needs about one running elastic job. Counts are in nodes
// (launch units of the job's processes per node).
type Input struct {
	Now time.Time
	// Deadline is when the job should be done; zero when it has a budget instead.
	Deadline time.Time
	// BudgetNH is the node-hour budget; 0 when the job has a deadline instead.
	BudgetNH float64
	// SpentNH is the node-hours the job's attempts have used so far.
	SpentNH float64

	// Iterations is the job's total; Done how many it has completed (the latest report).
	Iterations, Done int64
	// SecPerIter is the time per iteration measured on Current nodes, over Window and
	// WindowIters iterations of the current attempt.
	SecPerIter  float64
	Window      time.Duration
	WindowIters int64

	// Current is the job's node count; Min and Max its declared range; Free the nodes the job
	// could add now (free nodes it does not hold).
	Current, Min, Max, Free int
	// Busy counts the alive nodes the job does not hold that have no slot free (loaded above
	// their cores, or held by other jobs). Force says the job was submitted with --force: a
	// deadline job that cannot make its deadline on the free nodes then grows onto busy ones
	// too, as --force places a job on an overloaded cluster. Without Force they are ignored.
	Busy  int
	Force bool

	// RestartCost is the job's measured checkpoint + relaunch time; 0 = not measured yet.
	RestartCost time.Duration
	// LastResize is when the job was last asked to resize; zero = never.
	LastResize time.Time
	// Grown says the last resize was upward: a deadline job is not shrunk after it (the surplus
	// of rounding n_p up is what lets it finish early, not a reason to give nodes back).
	Grown bool
	// CommShare is the share of an iteration the job reports spending in communication, in
	// [0,1]; CommHeavy says the user declared the job communication-heavy.
	CommShare float64
	CommHeavy bool
}

// Decision is the node count the job should run on, and why.
type Decision struct {
	// Target is the count to run on; equal to Current unless Resize.
	Target int
	Resize bool
	// Reason says why, in one line for `shoal job`.
	Reason string
	// Needed is the seed's n_p (restart cost and margin included) before clamping to the range
	// and to what is free; 0 when not computed, math.MaxInt32 when no count can make it.
	Needed int
	// FinishCurrent and FinishTarget are the predicted finish times on Current and on Target
	// nodes; zero when unknown.
	FinishCurrent, FinishTarget time.Time
	// NodeHours is the predicted total node-hours at Target (spent + remaining); 0 when unknown.
	NodeHours float64
}

// impossible is Needed when no node count can finish in the time left.
const impossible = math.MaxInt32

// Need is seed 004's n_p = ceil(n_c * t_pi * it_rem / t_left), assuming perfect scaling.
// It returns math.MaxInt32 when no time is left.
func Need(nc int, secPerIter float64, itRem int64, left float64) int {
	if itRem <= 0 {
		return 1
	}
	if left <= 0 {
		return impossible
	}
	n := math.Ceil(float64(nc) * secPerIter * float64(itRem) / left)
	if n > impossible {
		return impossible
	}
	return max(1, int(n))
}

// IterTime predicts the time per iteration on n nodes from secPerIter measured on nc nodes: the
// computing share (1-comm) scales with the node count, the communicating share does not.
func IterTime(secPerIter, comm float64, nc, n int) float64 {
	comm = min(1, max(0, comm))
	return secPerIter * ((1-comm)*float64(nc)/float64(n) + comm)
}

// Decide applies the rule of the package comment to one job.
func Decide(cfg Config, in Input) Decision {
	d := Decision{Target: in.Current}
	switch {
	case in.Current < 1:
		d.Reason = "not running"
		return d
	case in.Iterations <= 0:
		d.Reason = "the job declared no total of iterations: it runs as a fixed-size job"
		return d
	case in.WindowIters <= 0 || !(in.SecPerIter > 0):
		d.Reason = "no progress reported on this attempt yet: it runs as a fixed-size job until it reports"
		return d
	}
	itRem := max(0, in.Iterations-in.Done)
	if itRem == 0 {
		d.Reason = "all iterations done"
		return d
	}
	d.FinishCurrent = in.Now.Add(secs(float64(itRem) * in.SecPerIter))
	d.FinishTarget = d.FinishCurrent
	if in.Window < cfg.MinWindow || in.WindowIters < cfg.MinIters {
		d.Reason = fmt.Sprintf("measuring the rate on %d nodes (%d iterations in %s so far)", in.Current, in.WindowIters, round(in.Window))
		return d
	}
	if !in.LastResize.IsZero() && in.Now.Sub(in.LastResize) < cfg.MinInterval {
		d.Reason = fmt.Sprintf("last resized %s ago; the minimum interval is %s", round(in.Now.Sub(in.LastResize)), cfg.MinInterval)
		return d
	}
	m := model{cfg: cfg, in: in, itRem: itRem, cost: in.RestartCost.Seconds()}
	if in.RestartCost <= 0 {
		m.cost = cfg.DefaultRestartCost.Seconds()
	}
	m.lo = min(in.Min, in.Current)
	m.hi = max(in.Current, min(in.Max, in.Current+max(0, in.Free)))
	switch {
	case in.BudgetNH > 0:
		return m.budget(d)
	case !in.Deadline.IsZero():
		return m.deadline(d)
	}
	d.Reason = "no deadline and no budget: nothing to decide"
	return d
}

type model struct {
	cfg    Config
	in     Input
	itRem  int64
	cost   float64 // seconds
	lo, hi int
}

// remaining is the predicted time to finish on n nodes, the restart included when n differs.
func (m *model) remaining(n int) float64 {
	t := float64(m.itRem) * IterTime(m.in.SecPerIter, m.in.CommShare, m.in.Current, n)
	if n != m.in.Current {
		t += m.cost
	}
	return t
}

func (m *model) heavy() (bool, string) {
	if m.in.CommHeavy {
		return true, "declared communication-heavy"
	}
	if m.in.CommShare >= m.cfg.CommHeavy {
		return true, fmt.Sprintf("communication-heavy (%.0f%% of each iteration)", 100*m.in.CommShare)
	}
	return false, ""
}

func (m *model) resize(d Decision, n int, reason string) Decision {
	d.Target, d.Resize, d.Reason = n, n != m.in.Current, reason
	d.FinishTarget = m.in.Now.Add(secs(m.remaining(n)))
	d.NodeHours = m.in.SpentNH + float64(n)*m.remaining(n)/3600
	return d
}

func (m *model) deadline(d Decision) Decision {
	in := m.in
	left := in.Deadline.Sub(in.Now).Seconds()
	cur := m.remaining(in.Current)
	d.NodeHours = in.SpentNH + float64(in.Current)*cur/3600
	d.Needed = Need(in.Current, in.SecPerIter, m.itRem, m.cfg.Margin*left-m.cost)
	if cur <= m.cfg.Margin*left {
		for n := m.lo; n < in.Current && !in.Grown; n++ {
			// Shrink when the smaller count keeps a comfortable margin and the node-time it
			// hands back to others outweighs the node-time the restart burns.
			freed := float64(in.Current-n) * m.remaining(n)
			if m.remaining(n) <= m.cfg.ShrinkSlack*left && freed >= m.cfg.ShrinkGain*float64(in.Current)*m.cost {
				return m.resize(d, n, fmt.Sprintf("deadline: %d nodes still finish %s early after a %s restart; %d nodes freed",
					n, round(secs(left-m.remaining(n))), round(secs(m.cost)), in.Current-n))
			}
		}
		d.Reason = fmt.Sprintf("on track: predicted to finish %s before the deadline", round(secs(left-cur)))
		if in.Grown {
			d.Reason += " (grown for it: not shrunk back)"
		}
		return d
	}
	if heavy, why := m.heavy(); heavy {
		d.Reason = fmt.Sprintf("%s: not grown (seed 004: such jobs do not scale; better-connected nodes are preferred at the next placement); predicted %s late",
			why, round(secs(cur-left)))
		return d
	}
	hi := m.hi
	if in.Force && in.Busy > 0 && m.remaining(m.hi) > m.cfg.Margin*left {
		// The free nodes are not enough: --force lets the job time-share busy ones. The model
		// assumes an added node runs at the measured speed, which a busy one does not; the next
		// decision measures the rate on the new count and grows again if it must.
		hi = max(in.Current, min(in.Max, in.Current+max(0, in.Free)+in.Busy))
	}
	n := hi
	for c := in.Current + 1; c <= hi; c++ {
		if m.remaining(c) <= m.cfg.Margin*left {
			n = c
			break
		}
	}
	if n <= in.Current {
		busy := ""
		if in.Busy > 0 && !in.Force {
			busy = fmt.Sprintf("; %d busy nodes are used only with --force", in.Busy)
		}
		d.Reason = fmt.Sprintf("behind: needs %s nodes but none can be added (max %d, %d free%s); predicted %s late",
			needed(d.Needed), in.Max, in.Free, busy, round(secs(cur-left)))
		return d
	}
	gain := cur - (m.remaining(n) - m.cost)
	if gain <= m.cost*(1+m.cfg.MinGain) {
		d.Reason = fmt.Sprintf("behind, but %d nodes would save %s, not more than the %s restart", n, round(secs(gain)), round(secs(m.cost)))
		return d
	}
	why := fmt.Sprintf("deadline: needs %s nodes (n_p), grown %d -> %d", needed(d.Needed), in.Current, n)
	switch {
	case m.remaining(n) > left:
		why = fmt.Sprintf("deadline cannot be met even on %d nodes: grown %d -> %d, predicted %s late", n, in.Current, n, round(secs(m.remaining(n)-left)))
	case m.remaining(n) > m.cfg.Margin*left:
		why = fmt.Sprintf("deadline: needs %s nodes (n_p); grown %d -> %d, the most available, predicted %s early (less than the %.0f%% margin)",
			needed(d.Needed), in.Current, n, round(secs(left-m.remaining(n))), 100*(1-m.cfg.Margin))
	}
	if forced := n - m.hi; forced > 0 {
		why += fmt.Sprintf(" (%d of the added nodes busy, used because of --force)", forced)
	}
	return m.resize(d, n, why)
}

func (m *model) budget(d Decision) Decision {
	in := m.in
	left := in.BudgetNH - in.SpentNH
	nh := func(n int) float64 { return float64(n) * m.remaining(n) / 3600 }
	// fits: the current count while within the budget, another only within Margin of it, so a
	// count chosen at the edge of the budget is not left again at the next wobble of the rate.
	fits := func(n int) bool {
		if n == in.Current {
			return nh(n) <= left
		}
		return nh(n) <= m.cfg.Margin*left
	}
	best, cheapest := -1, m.lo
	for n := m.lo; n <= m.hi; n++ {
		if nh(n) < nh(cheapest) {
			cheapest = n
		}
		if fits(n) && (best < 0 || m.remaining(n) < m.remaining(best)) {
			best = n
		}
	}
	d.NodeHours = in.SpentNH + nh(in.Current)
	within := best >= 0
	if !within {
		best = cheapest
	}
	heavy, why := m.heavy()
	switch {
	case best == in.Current && within:
		d.Reason = fmt.Sprintf("within budget: predicted %.3g of %.3g node-hours", d.NodeHours, in.BudgetNH)
		return d
	case best == in.Current:
		d.Reason = fmt.Sprintf("over budget at every count (predicted %.3g of %.3g node-hours); %d nodes is the cheapest", d.NodeHours, in.BudgetNH, best)
		return d
	case best > in.Current && heavy:
		d.Reason = fmt.Sprintf("within budget; %s: not grown", why)
		return d
	case best > in.Current:
		gain := m.remaining(in.Current) - m.remaining(best)
		if gain <= m.cost*m.cfg.MinGain {
			d.Reason = fmt.Sprintf("within budget; %d nodes would save only %s after the %s restart", best, round(secs(gain)), round(secs(m.cost)))
			return d
		}
		return m.resize(d, best, fmt.Sprintf("budget: %d nodes finish %s sooner within %.3g node-hours", best, round(secs(gain)), in.BudgetNH))
	}
	if within {
		return m.resize(d, best, fmt.Sprintf("budget: %.3g node-hours predicted on %d nodes, over %.3g; %d nodes fit (%.3g)",
			d.NodeHours, in.Current, in.BudgetNH, best, in.SpentNH+nh(best)))
	}
	return m.resize(d, best, fmt.Sprintf("budget: over %.3g node-hours at every count; %d nodes is the cheapest (%.3g instead of %.3g)",
		in.BudgetNH, best, in.SpentNH+nh(best), d.NodeHours))
}

func needed(n int) string {
	if n >= impossible {
		return "infinitely many"
	}
	return fmt.Sprint(n)
}

func secs(s float64) time.Duration {
	if s > float64(math.MaxInt64/2)/1e9 {
		return time.Duration(math.MaxInt64 / 2)
	}
	return time.Duration(s * float64(time.Second))
}

func round(d time.Duration) time.Duration {
	if d > 10*time.Second || d < -10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
