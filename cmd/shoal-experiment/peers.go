package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/topoexport"
	"github.com/shoal-hpc/shoal/testcluster/slurm"
)

// Slurm side by side with shoal, in the same run on the same testbed: the
// policies slurm, slurm-tree and slurm-measured ask a Slurm cluster
// (testcluster/slurm) for the group, then the group runs the program the
// same way as every other policy's (mpirun on its first node), so only
// the placement differs.
const (
	// polSlurm is Slurm's default placement: select/cons_tres, no topology.
	polSlurm = "slurm"
	// polSlurmTree is topology/tree with the topology.conf an administrator
	// writes from the cabling: the case's switches and their nodes.
	polSlurmTree = "slurm-tree"
	// polSlurmMeasured is topology/tree with what `shoal export
	// slurm-topology` printed from the running cluster after its first
	// bandwidth cycle, and the weights of its --weights.
	polSlurmMeasured = "slurm-measured"
)

func isSlurmPolicy(p string) bool {
	return p == polSlurm || p == polSlurmTree || p == polSlurmMeasured
}

func (c config) usesSlurm() bool {
	for _, p := range c.policies {
		if isSlurmPolicy(p) {
			return true
		}
	}
	return false
}

// peers is a case's Slurm cluster and its configurations, one per policy.
type peers struct {
	sl   *slurm.Cluster
	cfgs map[string]slurm.Config
	now  string // the configuration slurmctld runs
	job  int    // the allocation held by the running group, 0 when none
	recs []peerRec
	// measured is the export's topology.conf and weights, and what
	// scontrol show topology printed for it.
	measured, weights, shown string
}

// peerRec is one launch or throughput measurement.
type peerRec struct {
	Rep  int
	What string // peerLaunch, peerHello, peerArray
	By   string // "slurm" or "shoal"
	S    float64
	Load string
	Err  string
}

const (
	peerLaunch = "launch"
	peerHello  = "hello"
	peerArray  = "array"
)

// startSlurm brings Slurm up beside the shoal agents: slurmctld on the
// asking node, every node's CPUs= as its agent reports its cores.
func (cs *caseRun) startSlurm(ctx context.Context) error {
	var nodes []api.Node
	if err := cs.l.JSON(ctx, cs.asker, &nodes, "nodes"); err != nil {
		return fmt.Errorf("slurm: the agents' cores: %w", err)
	}
	cpus := map[string]int{}
	for _, n := range nodes {
		cpus[n.Name] = n.Cores
	}
	sl, err := slurm.Up(ctx, cs.l.TB, slurm.Options{Dir: filepath.Join(cs.work, "slurm"), Controller: cs.asker, PerNodeCPUs: cpus, CPUs: 1})
	if err != nil {
		return err
	}
	var hand []topoexport.Node
	for _, n := range cs.topo.Nodes {
		hand = append(hand, topoexport.Node{Name: n.Name, Switch: n.Switch})
	}
	var b bytes.Buffer
	if err := topoexport.Build(hand, 0).SlurmTree(&b); err != nil {
		return errors.Join(err, sl.Close())
	}
	cs.peers = &peers{sl: sl, now: polSlurm, cfgs: map[string]slurm.Config{
		polSlurm:     {},
		polSlurmTree: {Topology: b.String()},
	}}
	cs.say("slurm: slurmctld on %s, a slurmd per node (CPUs= the agents' cores %v); policy slurm-tree's topology.conf from the cabling:\n%s",
		cs.asker, cpus, strings.TrimSpace(b.String()))
	return nil
}

var weightLine = regexp.MustCompile(`(?m)^NodeName=(\S+) Weight=(\d+)$`)

// exportMeasured asks the running shoal cluster for its topology.conf and
// weights (as an administrator would, once the first bandwidth cycle has
// measured the links), checks that slurmctld starts with them, and keeps
// what scontrol show topology printed.
func (cs *caseRun) exportMeasured(ctx context.Context) error {
	p := cs.peers
	conf, err := cs.l.Shoal(ctx, cs.asker, "export", "slurm-topology")
	if err != nil {
		return fmt.Errorf("shoal export slurm-topology: %w", err)
	}
	weights, err := cs.l.Shoal(ctx, cs.asker, "export", "slurm-topology", "--weights")
	if err != nil {
		return fmt.Errorf("shoal export slurm-topology --weights: %w", err)
	}
	w := map[string]int{}
	for _, m := range weightLine.FindAllStringSubmatch(weights, -1) {
		w[m[1]], _ = strconv.Atoi(m[2])
	}
	p.measured, p.weights = conf, weights
	p.cfgs[polSlurmMeasured] = slurm.Config{Topology: conf, Weights: w}
	if err := cs.slurmConfig(ctx, polSlurmMeasured); err != nil {
		return fmt.Errorf("slurmctld with shoal's exported topology: %w", err)
	}
	if p.shown, err = p.sl.Client(ctx, "scontrol", "show", "topology"); err != nil {
		return err
	}
	cs.say("slurm: shoal export slurm-topology (%s):\n%s%s\nscontrol show topology:\n%s", cs.asker, conf, weights, strings.TrimSpace(p.shown))
	return nil
}

// slurmConfig restarts slurmctld with policy's configuration unless it
// runs it already.
func (cs *caseRun) slurmConfig(ctx context.Context, policy string) error {
	p := cs.peers
	if p.now == policy {
		return nil
	}
	cfg, ok := p.cfgs[policy]
	if !ok {
		return fmt.Errorf("slurm: no configuration for %s yet", policy)
	}
	if err := p.sl.Configure(ctx, cfg); err != nil {
		return err
	}
	p.now = policy
	return nil
}

// slurmHosts is a Slurm policy's group: slurmctld with the policy's
// configuration, an allocation of np/ppn nodes held until releaseSlurm.
func (cs *caseRun) slurmHosts(ctx context.Context, policy string) ([]string, error) {
	if cs.peers == nil {
		return nil, fmt.Errorf("%s: Slurm is not running", policy)
	}
	if err := cs.slurmConfig(ctx, policy); err != nil {
		return nil, err
	}
	hosts, id, err := cs.peers.sl.Alloc(ctx, cs.np/cs.c.ppn, cs.c.ppn)
	if err != nil {
		return nil, err
	}
	cs.peers.job = id
	return hosts, nil
}

// releaseSlurm frees the allocation a Slurm policy's group ran in.
func (cs *caseRun) releaseSlurm(ctx context.Context) error {
	if cs.peers == nil || cs.peers.job == 0 {
		return nil
	}
	id := cs.peers.job
	cs.peers.job = 0
	return cs.peers.sl.Release(ctx, id)
}

// helloSource is an MPI hello: every rank wired up and through a barrier.
const helloSource = `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) printf("hello from %d ranks\n", size);
	MPI_Finalize();
	return 0;
}
`

// overheads measures, -peer-reps times in a fresh random order each,
// what Slurm and shoal add to a launch and how fast they get through an
// array: srun -N N -n N /bin/true against shoal run -n N --ppn 1, an MPI
// hello through salloc+mpirun against shoal run, and a -array-tasks array
// of /bin/true from submit to the poll that finds every task done (both
// polled every -poll, as a user watching squeue or shoal jobs would).
// Slurm runs its default configuration.
func (cs *caseRun) overheads(ctx context.Context, rng *rand.Rand) error {
	c := cs.c
	if c.peerReps == 0 {
		return nil
	}
	if err := cs.slurmConfig(ctx, polSlurm); err != nil {
		return err
	}
	src := filepath.Join(cs.work, "hello.c")
	hello := filepath.Join(cs.work, "hello")
	if err := os.WriteFile(src, []byte(helloSource), 0o644); err != nil {
		return err
	}
	if b, err := exec.CommandContext(ctx, "mpicc.openmpi", "-O2", "-o", hello, src).CombinedOutput(); err != nil {
		return fmt.Errorf("mpicc.openmpi hello.c: %w: %s", err, b)
	}
	n := strconv.Itoa(c.np / max(c.ppn, 1))
	sub := cs.l.TB.Subnet().String()
	ctl := cs.peers.sl.Controller()
	tasks := fmt.Sprintf("0-%d", c.arrayTasks-1)
	runs := map[string]func(ctx context.Context) error{
		"slurm " + peerLaunch: func(ctx context.Context) error {
			_, err := cs.peers.sl.ClientOn(ctx, ctl, "srun", "-N", n, "-n", n, "/bin/true")
			return err
		},
		"shoal " + peerLaunch: func(ctx context.Context) error {
			_, err := cs.l.Shoal(ctx, cs.asker, "run", "-n", n, "--ppn", "1", "--mpi", "none", "--", "/bin/true")
			return err
		},
		"slurm " + peerHello: func(ctx context.Context) error {
			out, err := cs.peers.sl.ClientOn(ctx, ctl, "salloc", "-N", n, "-n", n, "--ntasks-per-node", "1",
				"mpirun.openmpi", "--allow-run-as-root", "--mca", "btl", "tcp,self", "--mca", "pml", "ob1",
				"--mca", "oob_tcp_if_include", sub, "--mca", "btl_tcp_if_include", sub, "--mca", "mpi_yield_when_idle", "1", hello)
			return helloOK(out, err)
		},
		"shoal " + peerHello: func(ctx context.Context) error {
			out, err := cs.l.Shoal(ctx, cs.asker, "run", "-n", n, "--ppn", "1", "--", hello)
			return helloOK(out, err)
		},
		"slurm " + peerArray: func(ctx context.Context) error {
			out, err := cs.peers.sl.ClientOn(ctx, ctl, "sbatch", "--array="+tasks, "-o", "/dev/null", "-e", "/dev/null", "-J", "throughput", "--wrap", "/bin/true")
			if err != nil {
				return err
			}
			f := strings.Fields(out)
			if len(f) == 0 {
				return fmt.Errorf("sbatch printed %q", out)
			}
			id := f[len(f)-1]
			return cs.pollUntil(ctx, func(ctx context.Context) (bool, error) {
				out, err := cs.peers.sl.ClientOn(ctx, ctl, "squeue", "-h", "-j", id, "-o", "%T")
				if err != nil && strings.Contains(err.Error(), "Invalid job id") {
					return true, nil
				}
				return err == nil && strings.TrimSpace(out) == "", err
			})
		},
		"shoal " + peerArray: func(ctx context.Context) error {
			out, err := cs.l.Shoal(ctx, cs.asker, "submit", "--array", tasks, "-n", "1", "--mpi", "none", "--", "/bin/true")
			if err != nil {
				return err
			}
			id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
			if err != nil {
				return fmt.Errorf("shoal submit printed %q", out)
			}
			return cs.pollUntil(ctx, func(ctx context.Context) (bool, error) {
				var jobs []api.Job
				if err := cs.l.JSON(ctx, cs.asker, &jobs, "jobs", "--state", "queued,launching,running"); err != nil {
					return false, err
				}
				for _, j := range jobs {
					if j.ArrayJobID == id || j.ID == id {
						return false, nil
					}
				}
				return true, nil
			})
		},
	}
	order := []string{"slurm " + peerLaunch, "shoal " + peerLaunch, "slurm " + peerHello, "shoal " + peerHello, "slurm " + peerArray, "shoal " + peerArray}
	for rep := 1; rep <= c.peerReps; rep++ {
		for _, k := range shuffled(rng, order) {
			by, what, _ := strings.Cut(k, " ")
			rctx, cancel := context.WithTimeout(ctx, c.runTimeout)
			start := time.Now()
			err := runs[k](rctx)
			cancel()
			r := peerRec{Rep: rep, What: what, By: by, S: time.Since(start).Seconds(), Load: loadAvg()}
			status := fmt.Sprintf("%.3fs", r.S)
			if err != nil {
				r.Err = strings.ReplaceAll(truncate(err.Error(), 300), "\n", " ")
				status = "FAILED: " + r.Err
			}
			cs.peers.recs = append(cs.peers.recs, r)
			cs.say("%s overhead %d/%d %-6s %-6s -> %s", cs.topo.Name, rep, c.peerReps, by, what, status)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}

func helloOK(out string, err error) error {
	if err == nil && !strings.Contains(out, "hello from") {
		err = fmt.Errorf("no hello in %q", truncate(out, 200))
	}
	return err
}

// pollUntil calls done every -poll until it says so or ctx ends.
func (cs *caseRun) pollUntil(ctx context.Context, done func(context.Context) (bool, error)) error {
	tick := time.NewTicker(cs.c.poll)
	defer tick.Stop()
	for {
		ok, err := done(ctx)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last poll: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}
