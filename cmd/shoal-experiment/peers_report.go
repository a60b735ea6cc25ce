package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// peerCase is what the Slurm comparison keeps of one case.
type peerCase struct {
	topo  netns.Topology
	recs  []runRec
	peers *peers
	loads []float64
}

// peersRows are the placement rows of the comparison, in order.
var peersRows = []struct{ policy, label string }{
	{polSlurm, "Slurm, default `select/cons_tres`"},
	{polSlurmTree, "Slurm, `topology/tree`, `topology.conf` from the cabling"},
	{polSlurmMeasured, "Slurm, `topology/tree`, `topology.conf` and weights from `shoal export slurm-topology`"},
	{"random", "random (seed 002's baseline)"},
	{"netload", "shoal `netload`"},
	{"oracle", "the best group (oracle), by hostfile"},
}

// meanOf is the mean time of policy's successful steady-state runs of
// app, and how many there were.
func meanOf(recs []runRec, policy, app string) (float64, int) {
	var v []float64
	for _, r := range recs {
		if r.Kind == "steady" && r.App == app && r.Policy == policy && r.Err == "" {
			v = append(v, r.TimeS)
		}
	}
	return mean(v), len(v)
}

// peersReport prints one case's comparison with Slurm: the mean job time
// of every placement row per program, netload's ratios to Slurm with the
// cabling's topology and to the oracle, then the launch and throughput
// medians and shoal's ratio to Slurm's (above 1: shoal takes longer).
func peersReport(w io.Writer, c config, pc peerCase) {
	lo, hi := math.NaN(), math.NaN()
	if len(pc.loads) > 0 {
		lo, hi = slices.Min(pc.loads), slices.Max(pc.loads)
	}
	for _, name := range caseNames(pc.recs) {
		recs := slices.DeleteFunc(slices.Clone(pc.recs), func(r runRec) bool { return r.Case != name })
		for _, app := range c.apps {
			fmt.Fprintf(w, "\n### %s: against Slurm, %s, steady state (%d per node; host load average %s–%s during the runs)\n\n",
				name, app, c.ppn, fmtNum("%.1f", lo), fmtNum("%.1f", hi))
			fmt.Fprintln(w, "| placed by | mean job time s | runs |")
			fmt.Fprintln(w, "|---|---:|---:|")
			for _, row := range peersRows {
				if !slices.Contains(c.policies, row.policy) {
					continue
				}
				m, n := meanOf(recs, row.policy, app)
				fmt.Fprintf(w, "| %s | %s | %d |\n", row.label, fmtNum("%.2f", m), n)
			}
			net, _ := meanOf(recs, "netload", app)
			tree, _ := meanOf(recs, polSlurmTree, app)
			orc, _ := meanOf(recs, "oracle", app)
			fmt.Fprintf(w, "\nnetload / slurm-tree: %s; netload / oracle: %s", fmtNum("%.2f", net/tree), fmtNum("%.2f", net/orc))
			if rnd, n := meanOf(recs, "random", app); n > 0 {
				// Seed 002's gain over random, netload's as a share of
				// the best group's: what of the possible gain it took.
				fmt.Fprintf(w, "; netload's gain over random / the oracle's: %s", fmtNum("%.2f", (rnd-net)/(rnd-orc)))
			}
			fmt.Fprintln(w)
		}
	}
	if pc.peers.shown != "" {
		fmt.Fprintf(w, "\n%s: slurm-measured's topology.conf, as `shoal export slurm-topology` printed it, and its weights:\n\n%s%s\nslurmctld started with it; `scontrol show topology`:\n\n%s\n",
			pc.topo.Name, indent(pc.peers.measured), indent(pc.peers.weights), indent(pc.peers.shown))
	}
	if len(pc.peers.recs) == 0 {
		return
	}
	n := c.np / max(c.ppn, 1)
	fmt.Fprintf(w, "\n%s: launch and throughput, medians of %d interleaved repetitions (Slurm's default settings)\n\n", pc.topo.Name, c.peerReps)
	fmt.Fprintln(w, "| measure | Slurm | shoal | shoal / Slurm |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	rows := []struct{ what, label string }{
		{peerLaunch, fmt.Sprintf("`srun -N%d -n%d /bin/true` vs `shoal run -n %d --ppn 1 -- /bin/true`", n, n, n)},
		{peerHello, fmt.Sprintf("MPI hello: `salloc -N%d` + `mpirun` vs `shoal run -n %d --ppn 1`", n, n)},
		{peerArray, fmt.Sprintf("%d-task array of `/bin/true`, submit to all done: `sbatch --array` vs `shoal submit --array`", c.arrayTasks)},
	}
	for _, row := range rows {
		s, ok1 := peerMedian(pc.peers.recs, row.what, "slurm")
		sh, ok2 := peerMedian(pc.peers.recs, row.what, "shoal")
		cell := func(v float64, ok bool) string {
			switch {
			case !ok:
				return "failed"
			case row.what == peerArray:
				return fmt.Sprintf("%.2f s (%.0f tasks/s)", v, float64(c.arrayTasks)/v)
			}
			return fmt.Sprintf("%.0f ms", v*1000)
		}
		ratio := math.NaN()
		if ok1 && ok2 {
			ratio = sh / s
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row.label, cell(s, ok1), cell(sh, ok2), fmtNum("%.2f", ratio))
	}
}

// peerMedian is the median of by's successful measurements of what.
func peerMedian(recs []peerRec, what, by string) (float64, bool) {
	var v []float64
	for _, r := range recs {
		if r.What == what && r.By == by && r.Err == "" {
			v = append(v, r.S)
		}
	}
	return median(v), len(v) > 0
}

// indent makes text a Markdown code block.
func indent(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// caseNames are the cases of recs in the order they first appear: one
// per job size of a case that queues several (caseRun.caseName).
func caseNames(recs []runRec) []string {
	var out []string
	for _, r := range recs {
		if !slices.Contains(out, r.Case) {
			out = append(out, r.Case)
		}
	}
	return out
}
