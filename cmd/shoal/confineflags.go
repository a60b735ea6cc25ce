package main

import (
	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/confine"
)

// Confinement flags of a job, named as Slurm names them.
func confineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mem", Usage: "memory limit per node, `SIZE` (e.g. 512M, 4G; a plain number is megabytes); the kernel kills the job's processes beyond it"},
		&cli.StringFlag{Name: "mem-per-cpu", Usage: "memory limit per CPU, `SIZE`, as Slurm's: the limit per process is SIZE × --cpus-per-rank"},
		&cli.StringFlag{Name: "mem-per-rank", Usage: "memory limit per process, `SIZE`: the node's limit is SIZE × its processes (instead of --mem)"},
		&cli.IntFlag{Name: "cpus-per-rank", Aliases: []string{"c", "cpus-per-task"}, Usage: "CPUs each process may use, `N`: the job's CPU quota on a node is N × its processes there, and placement, fair share and --max-user-procs count N cores per process", DefaultText: "1"},
	}
}

// applyConfineFlags reads the confinement flags into sp.
func applyConfineFlags(c *cli.Context, sp *api.JobSpec) error {
	set := 0
	for _, f := range []string{"mem", "mem-per-rank", "mem-per-cpu"} {
		if c.IsSet(f) {
			set++
		}
	}
	if set > 1 {
		return usagef(c, "--mem, --mem-per-rank and --mem-per-cpu: give one (per node, per process or per CPU)")
	}
	for _, f := range []struct {
		name string
		to   *uint64
	}{{"mem", &sp.MemPerNode}, {"mem-per-rank", &sp.MemPerRank}} {
		if !c.IsSet(f.name) {
			continue
		}
		v, err := confine.ParseSize("--"+f.name, c.String(f.name))
		if err != nil {
			return usagef(c, "%v", err)
		}
		*f.to = v
	}
	if c.IsSet("cpus-per-rank") {
		n := c.Int("cpus-per-rank")
		if n < 1 {
			return usagef(c, "--cpus-per-rank %d: want at least 1 CPU per process", n)
		}
		sp.CPUsPerRank = n
	}
	if c.IsSet("mem-per-cpu") {
		v, err := confine.ParseSize("--mem-per-cpu", c.String("mem-per-cpu"))
		if err != nil {
			return usagef(c, "%v", err)
		}
		sp.MemPerRank = v * uint64(max(sp.CPUsPerRank, 1))
	}
	return nil
}
