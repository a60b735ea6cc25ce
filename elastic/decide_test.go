package elastic_test

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/elastic"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func TestNeed_SeedFormula(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		nc    int
		tpi   float64
		rem   int64
		left  float64
		want  int
		about string
	}{
		{4, 1, 100, 100, 4, "on time"},
		{4, 1, 100, 50, 8, "half the time, twice the nodes"},
		{4, 1, 100, 30, 14, "ceil(13.3)"},
		{4, 1, 100, 400, 1, "four times the time, a quarter of the nodes"},
		{4, 1, 100, 0, math.MaxInt32, "no time left"},
		{4, 1, 0, 10, 1, "nothing left"},
	} {
		if got := elastic.Need(c.nc, c.tpi, c.rem, c.left); got != c.want {
			t.Errorf("%s: Need(%d, %v, %d, %v) = %d, want %d", c.about, c.nc, c.tpi, c.rem, c.left, got, c.want)
		}
	}
}

func TestIterTime_CommunicationDoesNotScale(t *testing.T) {
	t.Parallel()
	if got := elastic.IterTime(1, 0, 2, 4); got != 0.5 {
		t.Errorf("perfect scaling 2->4: %v, want 0.5", got)
	}
	if got := elastic.IterTime(1, 0.5, 2, 4); got != 0.75 {
		t.Errorf("half communication 2->4: %v, want 0.75", got)
	}
	if got := elastic.IterTime(1, 1, 2, 4); got != 1 {
		t.Errorf("all communication: %v, want 1", got)
	}
}

// base is a running job measured long enough to decide on: 2 nodes, 1 s per iteration,
// 100 of 1000 iterations done.
func base() elastic.Input {
	return elastic.Input{
		Now: t0, Iterations: 1000, Done: 100, SecPerIter: 1, Window: time.Minute, WindowIters: 60,
		Current: 2, Min: 1, Max: 8, Free: 6, RestartCost: 10 * time.Second,
	}
}

func TestDecide_Table(t *testing.T) {
	t.Parallel()
	cfg := elastic.DefaultConfig()
	mod := func(f func(*elastic.Input)) elastic.Input { in := base(); f(&in); return in }
	for _, c := range []struct {
		name   string
		in     elastic.Input
		target int
		reason string
	}{
		{"no progress: fixed size", mod(func(in *elastic.Input) { in.WindowIters, in.SecPerIter = 0, 0; in.Deadline = t0.Add(time.Minute) }), 2, "fixed-size"},
		{"no iterations: fixed size", mod(func(in *elastic.Input) { in.Iterations = 0; in.Deadline = t0.Add(time.Minute) }), 2, "fixed-size"},
		{"still measuring", mod(func(in *elastic.Input) { in.Window = time.Second; in.Deadline = t0.Add(time.Minute) }), 2, "measuring"},
		{"900 s of work, 300 s left: 2*900/(270-10) -> 7", mod(func(in *elastic.Input) { in.Deadline = t0.Add(300 * time.Second) }), 7, "n_p"},
		{"impossible: the maximum", mod(func(in *elastic.Input) { in.Deadline = t0.Add(100 * time.Second) }), 8, "cannot be met"},
		{"impossible, only 3 free: 5", mod(func(in *elastic.Input) { in.Deadline = t0.Add(100 * time.Second); in.Free = 3 }), 5, "cannot be met"},
		{"behind, nothing free", mod(func(in *elastic.Input) { in.Deadline = t0.Add(300 * time.Second); in.Free = 0 }), 2, "none can be added"},
		{"on track", mod(func(in *elastic.Input) { in.Deadline = t0.Add(1100 * time.Second) }), 2, "on track"},
		{"loose: shrink to 1", mod(func(in *elastic.Input) { in.Deadline = t0.Add(3000 * time.Second) }), 1, "nodes freed"},
		{"resized recently", mod(func(in *elastic.Input) {
			in.Deadline = t0.Add(300 * time.Second)
			in.LastResize = t0.Add(-5 * time.Second)
		}), 2, "minimum interval"},
		{"gain below restart cost", mod(func(in *elastic.Input) {
			in.Done = 988 // 12 s left on 2 nodes; 3 nodes save 4 s
			in.Deadline = t0.Add(11 * time.Second)
			in.Free = 1
		}), 2, "not more than"},
		{"communication-heavy is not grown", mod(func(in *elastic.Input) { in.Deadline = t0.Add(300 * time.Second); in.CommShare = 0.6 }), 2, "communication-heavy"},
		{"declared heavy is not grown", mod(func(in *elastic.Input) { in.Deadline = t0.Add(300 * time.Second); in.CommHeavy = true }), 2, "communication-heavy"},
		{"budget fits: finish earliest (grow)", mod(func(in *elastic.Input) { in.BudgetNH = 1 }), 8, "sooner"},
		{"budget tight with communication: shrink", mod(func(in *elastic.Input) {
			// 2 nodes, 30% communication: 900 its cost 2*900*1/3600 = 0.5 nh; 1 node 0.35*... cheaper.
			in.CommShare, in.BudgetNH, in.SpentNH = 0.3, 0.45, 0.05
		}), 1, "budget"},
		{"budget blown everywhere: cheapest", mod(func(in *elastic.Input) { in.CommShare, in.BudgetNH, in.SpentNH = 0.3, 0.1, 0.09 }), 1, "cheapest"},
	} {
		d := elastic.Decide(cfg, c.in)
		if d.Target != c.target || d.Resize != (c.target != c.in.Current) || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: target %d resize %v %q; want %d and a reason with %q", c.name, d.Target, d.Resize, d.Reason, c.target, c.reason)
		}
	}
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	if err := elastic.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := elastic.DefaultConfig()
	c.ShrinkSlack = 0.95
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "ShrinkSlack") {
		t.Fatalf("ShrinkSlack above Margin: %v", err)
	}
}

// job is a simulated iterative program in the manner of seed 004's Jacobi: t1 seconds per
// iteration on one node, a share comm of it not scaling, noise of +-noise per iteration.
type job struct {
	t1, comm, noise float64
	iterations      int64
	restart         time.Duration
}

type run struct {
	finish  time.Duration
	final   int
	resizes []int // node counts after each resize
}

// simulate runs the job from n0 nodes under cfg with a decision every second, paying the
// restart cost at each resize.
func simulate(t *testing.T, cfg elastic.Config, j job, n0, lo, hi int, deadline time.Duration, budget float64, seed int64) run {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	now, n := t0, n0
	var done float64
	var spent float64
	winStart, winDone := now, 0.0
	var last time.Time
	grown := false
	var r run
	for step := 0; done < float64(j.iterations); step++ {
		if step > 100000 {
			t.Fatal("simulation does not end")
		}
		nominal := j.t1 * ((1-j.comm)/float64(n) + j.comm)
		per := nominal * (1 + j.noise*(2*rng.Float64()-1))
		done = math.Min(float64(j.iterations), done+1/per)
		now = now.Add(time.Second)
		spent += float64(n) / 3600
		in := elastic.Input{
			Now: now, BudgetNH: budget, SpentNH: spent, Iterations: j.iterations, Done: int64(done),
			SecPerIter: now.Sub(winStart).Seconds() / (done - winDone), Window: now.Sub(winStart), WindowIters: int64(done - winDone),
			Current: n, Min: lo, Max: hi, Free: hi - n, RestartCost: j.restart, LastResize: last, CommShare: j.comm * j.t1 / nominal, Grown: grown, // the share the program measures on n nodes
		}
		if deadline > 0 {
			in.Deadline = t0.Add(deadline)
		}
		if d := elastic.Decide(cfg, in); d.Resize {
			if testing.Verbose() {
				t.Logf("t=%v done=%.0f n=%d spent=%.2f spi=%.3f -> %d: %s", now.Sub(t0), done, n, spent, in.SecPerIter, d.Target, d.Reason)
			}
			r.resizes = append(r.resizes, d.Target)
			last, grown = now, d.Target > n
			now = now.Add(j.restart)
			spent += float64(n) * j.restart.Hours()
			n = d.Target
			winStart, winDone = now, done
		}
	}
	r.finish, r.final = now.Sub(t0), n
	return r
}

// TestSeed004_Fig2Fig3 sweeps the time constraint as the seed's Jacobi experiment does: a
// tighter deadline ends on more nodes, a looser one on fewer, an impossible one on the maximum
// (19 nodes in the seed), and every feasible deadline is met.
func TestSeed004_Fig2Fig3(t *testing.T) {
	t.Parallel()
	cfg := elastic.DefaultConfig()
	j := job{t1: 4, iterations: 1000, restart: 10 * time.Second} // 4000 node-seconds of work
	prev := math.MaxInt
	for _, dl := range []time.Duration{150, 300, 400, 600, 800, 1200, 2000, 4000} {
		dl *= time.Second
		r := simulate(t, cfg, j, 4, 1, 19, dl, 0, 1)
		t.Logf("deadline %5v: finished in %5v on %2d nodes, resizes %v", dl, r.finish, r.final, r.resizes)
		if r.final > prev {
			t.Errorf("deadline %v ends on %d nodes, more than the %d of a tighter deadline", dl, r.final, prev)
		}
		prev = r.final
		if dl == 150*time.Second {
			if r.final != 19 {
				t.Errorf("impossible deadline: %d nodes, want the maximum 19", r.final)
			}
			continue
		}
		if r.finish > dl {
			t.Errorf("deadline %v missed: finished in %v", dl, r.finish)
		}
		if len(r.resizes) > 3 {
			t.Errorf("deadline %v: %d resizes %v", dl, len(r.resizes), r.resizes)
		}
	}
}

// TestDecide_NoFlapping runs noisy jobs (+-20% per iteration) over many deadlines and seeds: a
// job never changes direction (grow then shrink, or shrink then grow).
func TestDecide_NoFlapping(t *testing.T) {
	t.Parallel()
	cfg := elastic.DefaultConfig()
	for seed := int64(1); seed <= 20; seed++ {
		for _, dl := range []time.Duration{300, 500, 900, 1500} {
			j := job{t1: 4, iterations: 1000, restart: 10 * time.Second, noise: 0.2}
			r := simulate(t, cfg, j, 4, 1, 19, dl*time.Second, 0, seed)
			prev, dir := 4, 0
			for _, n := range r.resizes {
				d := 1
				if n < prev {
					d = -1
				}
				if dir != 0 && d != dir {
					t.Errorf("seed %d deadline %v: flapped %v", seed, dl*time.Second, r.resizes)
					break
				}
				dir, prev = d, n
			}
		}
	}
}

// TestDecide_RestartCostBlocksSmallGains: the same job near its end grows when restarts are cheap
// and does not when a restart costs more than the predicted gain.
func TestDecide_RestartCostBlocksSmallGains(t *testing.T) {
	t.Parallel()
	in := base()
	in.Done, in.Deadline = 960, t0.Add(30*time.Second) // 40 s left on 2 nodes, 30 s to go
	in.RestartCost = 2 * time.Second
	if d := elastic.Decide(elastic.DefaultConfig(), in); !d.Resize || d.Target <= 2 {
		t.Fatalf("cheap restart: %+v", d)
	}
	in.RestartCost = 30 * time.Second
	if d := elastic.Decide(elastic.DefaultConfig(), in); d.Resize {
		t.Fatalf("restart dearer than the gain, yet resized: %+v", d)
	}
}

// TestBudget_ShrinksCommunicatingJob: with 30% communication, fewer nodes cost fewer node-hours;
// a budget too small for the starting count ends on fewer nodes within the budget.
func TestBudget_ShrinksCommunicatingJob(t *testing.T) {
	t.Parallel()
	j := job{t1: 4, comm: 0.3, iterations: 1000, restart: 10 * time.Second}
	free := simulate(t, elastic.DefaultConfig(), j, 8, 1, 8, 0, 100, 1)
	tight := simulate(t, elastic.DefaultConfig(), j, 8, 1, 8, 0, 2.0, 1)
	t.Logf("generous budget: %d nodes in %v %v; tight: %d nodes in %v %v", free.final, free.finish, free.resizes, tight.final, tight.finish, tight.resizes)
	if free.final != 8 {
		t.Errorf("a generous budget should keep the fastest count 8, got %d", free.final)
	}
	if tight.final >= 8 {
		t.Errorf("a tight budget should shrink the job, got %d nodes", tight.final)
	}
}

// An elastic job submitted with --force on a cluster whose
// every other node is busy grows onto busy nodes to meet its deadline (as
// --force places a job on an overloaded cluster); without --force it does
// not, and says why. Budget jobs are not grown onto busy nodes either way.
func TestDecide_ForceGrowsOntoBusyNodes(t *testing.T) {
	t.Parallel()
	cfg := elastic.DefaultConfig()
	in := base()
	in.Free, in.Busy = 0, 6
	in.Deadline = t0.Add(400 * time.Second) // 900 s of work left on 2 nodes: needs ~5
	d := elastic.Decide(cfg, in)
	if d.Resize || !strings.Contains(d.Reason, "only with --force") {
		t.Fatalf("without --force: %+v", d)
	}
	in.Force = true
	d = elastic.Decide(cfg, in)
	if !d.Resize || d.Target <= in.Current || !strings.Contains(d.Reason, "--force") {
		t.Fatalf("with --force: %+v", d)
	}
	if d.Target > in.Max {
		t.Fatalf("grown past max: %+v", d)
	}
	// Free nodes come first: with enough free, the busy ones are not named.
	in.Free = 6
	if d := elastic.Decide(cfg, in); !d.Resize || strings.Contains(d.Reason, "busy") {
		t.Fatalf("with free nodes: %+v", d)
	}
	// A budget job under --force keeps to the free nodes.
	in.Free, in.Deadline, in.BudgetNH = 0, time.Time{}, 10
	if d := elastic.Decide(cfg, in); d.Resize && d.Target > in.Current {
		t.Fatalf("budget job grown onto busy nodes: %+v", d)
	}
}
