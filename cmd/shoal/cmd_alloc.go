package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/placement"
)

// exitWait is alloc's answer when placement recommends waiting.
const exitWait = 4

func allocCommand() *cli.Command {
	return &cli.Command{
		Name:  "alloc",
		Usage: "print the best hostfile for N processes right now (reserves nothing)",
		Description: `For users who launch MPI themselves: shoal places the processes on the
agent's current view of load and network and prints a hostfile.
Exits 4, with the reason on stderr, when placement recommends waiting.
A network-aware policy (netload, paper) on a cluster that has just formed
first waits, at most the agent's --placement-model-wait (or --model-wait),
for the network model to cover the nodes, printing the count on stderr.

Examples:
  shoal alloc -n 8 > hosts && mpiexec -f hosts -n 8 ./app
  shoal alloc -n 16 --ppn 4 --format openmpi
  shoal alloc -n 4 --format json | jq .score
  shoal alloc -n 4 --alpha 0.1 --weight flow=0    # a communication-bound program`,
		Flags: append(clientFlags(),
			&cli.IntFlag{Name: "np", Aliases: []string{"n"}, Usage: "number of processes, `N` (required)"},
			&cli.IntFlag{Name: "ppn", Usage: "processes per node, `K`"},
			&cli.StringFlag{Name: "policy", Usage: "netload (default), paper, load, sequential, random"},
			&cli.StringFlag{Name: "relax", Aliases: []string{"r"}, Usage: "GERBIL relaxation `MODE`: none, loc, dist, loc+dist, all"},
			&cli.StringFlag{Name: "hostfile", Aliases: []string{"f"}, Usage: "restrict to the hosts of `FILE`"},
			&cli.BoolFlag{Name: "oversubscribe", Aliases: []string{"o"}, Value: true, Usage: "allow more processes than free slots (degraded)"},
			&cli.BoolFlag{Name: "no-oversubscribe", Usage: "answer 'wait' instead of oversubscribing"},
			&cli.StringSliceFlag{Name: "pe", Usage: "`KIND:COUNT` per process, e.g. gpu:1"},
			&cli.Float64Flag{Name: "alpha", Usage: "compute-versus-network weight `A` in [0,1]; 0 takes the cluster's setting (0.3 unless changed)"},
			&cli.StringSliceFlag{Name: "weight", Usage: "compute-load attribute weight `NAME=W` (load, util, flow, mem, cores, mhz, memtotal, users); repeatable; the rest keep seed 002's weights"},
			&cli.StringFlag{Name: "format", Value: "mpich", Usage: "mpich (host:n), openmpi (host slots=n), slurm (nodelist) or json"},
			&cli.BoolFlag{Name: "force", Usage: "place even when every node is overloaded"},
			&cli.Int64Flag{Name: "seed", Usage: "seed of the random and sequential policies"},
			&cli.DurationFlag{Name: "model-wait", Usage: "wait at most `D` for the network model to cover the nodes (netload, paper; right after a cluster forms); 0: answer at once", DefaultText: "the agent's --placement-model-wait"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "alloc takes no arguments")
			}
			req := api.AllocRequest{NP: c.Int("np"), PPN: c.Int("ppn"), Policy: c.String("policy"), Relax: c.String("relax"),
				Oversubscribe: c.Bool("oversubscribe") && !c.Bool("no-oversubscribe"), Alpha: c.Float64("alpha"),
				Force: c.Bool("force"), Seed: c.Int64("seed")}
			if req.NP < 1 {
				return usagef(c, "-n/--np must be at least 1")
			}
			if specs := c.StringSlice("weight"); len(specs) > 0 {
				w := placement.DefaultAttrWeights()
				for _, s := range specs {
					if err := w.SetWeight(s); err != nil {
						return usagef(c, "--weight: %v", err)
					}
				}
				req.Attr = apiAttrWeights(w)
			}
			format := c.String("format")
			switch format {
			case "mpich", "openmpi", "slurm", "json":
			default:
				return usagef(c, "--format %q: use mpich, openmpi, slurm or json", format)
			}
			if f := c.String("hostfile"); f != "" {
				b, err := os.ReadFile(f)
				if err != nil {
					return usagef(c, "read hostfile: %v", err)
				}
				hs, err := placement.ParseHostfile(string(b))
				if err != nil {
					return usagef(c, "hostfile %s: %v", f, err)
				}
				req.Hostfile = apiHostfile(hs)
			}
			for _, p := range c.StringSlice("pe") {
				kind, n, ok := strings.Cut(p, ":")
				count, err := strconv.Atoi(n)
				if !ok || err != nil || count < 1 {
					return usagef(c, "--pe %q: use KIND:COUNT, e.g. gpu:1", p)
				}
				req.PEs = append(req.PEs, api.PENeed{Kind: strings.ToLower(kind), PerProc: count})
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			d, err := allocWaitingForModel(c, cl, req)
			if err != nil {
				return err
			}
			if format == "json" {
				if err := printJSON(c, d); err != nil {
					return err
				}
			}
			if d.Wait {
				return cli.Exit("placement recommends waiting: "+safe(d.WaitReason), exitWait)
			}
			if d.Degraded {
				fmt.Fprintln(c.App.ErrWriter, "shoal: degraded: "+safe(d.DegradedReason))
			}
			if format == "json" {
				return nil
			}
			out, err := placement.FormatHostfile(placementHosts(d), format)
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			for _, line := range strings.SplitAfter(out, "\n") {
				// Node names reach the hostfile as they came by gossip.
				if l, nl := strings.CutSuffix(line, "\n"); nl {
					fmt.Fprintln(c.App.Writer, safe(l))
				} else if l != "" {
					fmt.Fprint(c.App.Writer, safe(l))
				}
			}
			return nil
		},
	}
}

// modelPoll is how often `shoal alloc` asks again while the agent says it
// waits for the network model.
const modelPoll = time.Second

// modelPollMax caps the wait without --model-wait.
const modelPollMax = 10 * time.Minute

// allocWaitingForModel asks for a placement, and again every modelPoll
// while the agent answers that a network-aware placement waits for the
// network model (the agent bounds the wait from the first ask; --model-wait
// bounds it here too), printing each new count on stderr.
func allocWaitingForModel(c *cli.Context, cl *api.Client, req api.AllocRequest) (api.AllocDecision, error) {
	start := time.Now()
	limit, limited := c.Duration("model-wait"), c.IsSet("model-wait")
	last := ""
	for first := true; ; first = false {
		// The first ask has waited nothing, whatever the clock read in
		// between (under load it read 1 ms, and a CI run failed on it).
		var waited time.Duration
		if !first {
			waited = time.Since(start)
		}
		req.ModelWaitedMs = waited.Milliseconds()
		// An agent that kept saying wait (a bound of hours) is not waited
		// for past modelPollMax without --model-wait.
		req.NoModelWait = (limited && waited >= limit) || (!limited && waited >= modelPollMax)
		d, err := cl.Alloc(c.Context, req)
		if err != nil {
			return d, apiError(err)
		}
		if !d.ModelWait {
			if waited >= modelPoll/2 {
				fmt.Fprintf(c.App.ErrWriter, "shoal: waited %.1fs for the network model (%s)\n", waited.Seconds(), safe(d.ModelCoverage))
			}
			return d, nil
		}
		if d.WaitReason != last {
			fmt.Fprintln(c.App.ErrWriter, "shoal: "+safe(d.WaitReason))
			last = d.WaitReason
		}
		select {
		case <-c.Context.Done():
			return d, c.Context.Err()
		case <-time.After(modelPoll):
		}
	}
}
