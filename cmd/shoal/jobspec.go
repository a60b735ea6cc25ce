package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// jobFlags are shared by run and submit: how to reach the cluster
// (clientFlags) and the job's own options (jobOptionFlags).
func jobFlags() []cli.Flag {
	return append(clientFlags(), jobOptionFlags()...)
}

// jobOptionFlags are the options of the job itself, the only flags a batch
// script's directives may set (scriptOptions); the short forms are GERBIL's
// client options (seed 000, Table I). A flag that chooses where the CLI
// connects or which credentials it presents belongs in clientFlags, never
// here.
func jobOptionFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "np", Aliases: []string{"n", "ntasks"}, Usage: "number of processes, `N` (required), or MIN:MAX for an elastic job"},
		&cli.StringFlag{Name: "nodes", Usage: "elastic job on `MIN:MAX` nodes of --ppn processes each (default ppn 1)"},
		&cli.IntFlag{Name: "start", Usage: "elastic job: nodes of the first attempt, `N`", DefaultText: "MIN"},
		&cli.StringFlag{Name: "deadline", Usage: "elastic job: finish within `DURATION` (e.g. 30m) or by a time (RFC 3339 or 15:04)"},
		&cli.Float64Flag{Name: "budget", Usage: "elastic job: spend at most `NODE-HOURS`"},
		&cli.Int64Flag{Name: "iterations", Usage: "elastic job: the program's total of iterations, `N` (required with --nodes)"},
		&cli.BoolFlag{Name: "comm-heavy", Usage: "elastic job: communication-heavy, never grown (placed on better-connected nodes instead)"},
		&cli.StringFlag{Name: "checkpoint-dir", Usage: "elastic job: $SHOAL_CHECKPOINT_DIR, shared by all attempts (default: .shoal-checkpoints/ in --workdir)"},
		&cli.IntFlag{Name: "ppn", Aliases: []string{"ntasks-per-node"}, Usage: "processes per node, `K`", DefaultText: "what each node has free"},
		&cli.IntFlag{Name: "priority", Aliases: []string{"p"}, Usage: "higher runs first"},
		&cli.StringFlag{Name: "hostfile", Aliases: []string{"f"}, Usage: "run only on the hosts of `FILE` (host:n, host slots=n, or host)"},
		&cli.StringFlag{Name: "relax", Aliases: []string{"r"}, Usage: "GERBIL relaxation `MODE`: none, loc, dist, loc+dist, all"},
		&cli.BoolFlag{Name: "oversubscribe", Aliases: []string{"o", "s"}, Value: true, Usage: "place on busy nodes (reported as degraded) rather than wait"},
		&cli.BoolFlag{Name: "no-oversubscribe", Usage: "wait until enough slots are free instead of oversubscribing"},
		&cli.StringFlag{Name: "policy", Usage: "placement `POLICY`: netload (default), paper, load, sequential, random"},
		&cli.Float64Flag{Name: "alpha", Value: -1, Usage: "weight of compute load against network load, `A` in [0,1]", DefaultText: "the cluster's, 0.3"},
		&cli.StringSliceFlag{Name: "pe", Usage: "processing elements per process, `KIND:COUNT` (e.g. gpu:1), or none (default: detected from the executable)"},
		&cli.StringFlag{Name: "mpi", Usage: "`FLAVOUR`: mpich, openmpi or none (default: detected from the libraries the executable, or its mpi4py, Rmpi or MPI.jl, links)"},
		&cli.BoolFlag{Name: "immediate", Usage: "start now or fail at once with the reason (no queueing)"},
		&cli.IntFlag{Name: "max-attempts", Value: raftfsm.DefaultMaxAttempts, Usage: "attempts before giving up when nodes fail"},
		&cli.StringFlag{Name: "timeout", Aliases: []string{"t", "time"}, Usage: "wall-clock limit of one attempt, `TIME`: a duration (90m) or Slurm's MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (default: none)"},
		&cli.GenericFlag{Name: "env", Value: &envList{}, Usage: "set `K=V` in the job's environment (V may hold commas); repeatable"},
		&cli.StringFlag{Name: "workdir", Aliases: []string{"D", "chdir"}, Usage: "working `DIR` of the job (default: the current directory)"},
		&cli.BoolFlag{Name: "force", Usage: "place even when every node is overloaded"},
		&cli.StringFlag{Name: "job-name", Aliases: []string{"J"}, Usage: "the job's `NAME` (shown by 'shoal jobs'; singleton matches it)"},
		&cli.StringFlag{Name: "begin", Aliases: []string{"b"}, Usage: "start no earlier than `TIME`: now+30m, 15:04, 2026-11-24T15:04 or RFC 3339"},
		&cli.StringFlag{Name: "dependency", Aliases: []string{"d"}, Usage: "wait for other jobs, `COND[,COND...]`: afterok:ID[:ID...], afternotok:ID, afterany:ID, singleton"},
		&cli.BoolFlag{Name: "batch", Usage: "run the command (a batch script) once, on the head node, with the allocation in its environment; implied by #SHOAL lines"},
		&cli.StringFlag{Name: "output", Usage: "also write the job's stdout to `PATTERN` in the submit directory (%j job, %A array, %a task, %N node, %u user, %x name)"},
		&cli.StringFlag{Name: "error", Aliases: []string{"e"}, Usage: "also write the job's stderr to `PATTERN` (as --output)"},
		&cli.StringFlag{Name: "export", Value: "ALL", Usage: "the submitter's environment the job gets, `WHAT`: ALL, NONE, or VAR[,VAR=VALUE...] (ALL,VAR=VALUE adds to all)"},
		&cli.StringFlag{Name: "array", Aliases: []string{"a"}, Usage: "one job per task `INDICES`: 0-99, 1,3,5, 1-9:2, and %N for at most N at once (0-99%10)"},
	}, append(confineFlags(), slurmOnlyFlags()...)...)
}

// slurmOnlyFlags are sbatch's options with no shoal counterpart of another
// name: a Slurm user's script (#SBATCH) or command line may give them.
// Those shoal does not honour are accepted and reported once at submit
// (slurmNotes), never silently dropped.
func slurmOnlyFlags() []cli.Flag {
	ignored := "accepted from Slurm, not honoured (said at submit)"
	return []cli.Flag{
		&cli.StringFlag{Name: "account", Aliases: []string{"A"}, Usage: "charge `ACCOUNT` (recorded as $SLURM_JOB_ACCOUNT; shoal keeps no accounts)"},
		&cli.StringFlag{Name: "nodelist", Aliases: []string{"w"}, Usage: "run only on the nodes of `LIST` (n[01-04],gpu1), as many processes on each as placement finds"},
		&cli.StringFlag{Name: "exclude", Aliases: []string{"x"}, Usage: "never run on the nodes of `LIST`"},
		&cli.BoolFlag{Name: "exclusive", Usage: "nodes are not reserved whole: the job waits for free slots instead (as --no-oversubscribe)"},
		&cli.BoolFlag{Name: "parsable", Usage: "print the job ID alone (what shoal submit always prints)"},
		&cli.BoolFlag{Name: "slurm-script", Hidden: true, Usage: "the script has #SBATCH lines: Slurm's defaults (one task, output to slurm-%j.out)"},
		&cli.StringFlag{Name: "partition", Usage: "run in partition `NAME` (shoal partitions lists them; default: the cluster's default partition)"},
		&cli.StringFlag{Name: "constraint", Aliases: []string{"C"}, Usage: "run only on nodes with the features `EXPR`: names joined by & (all) and | (any), e.g. 'ib&avx512' (shoal nodes lists them)"},
		&cli.StringFlag{Name: "mail-type", Hidden: true, Usage: ignored},
		&cli.StringFlag{Name: "mail-user", Hidden: true, Usage: ignored},
		&cli.StringFlag{Name: "qos", Aliases: []string{"q"}, Hidden: true, Usage: ignored},
		&cli.StringFlag{Name: "signal", Hidden: true, Usage: ignored},
		&cli.BoolFlag{Name: "requeue", Hidden: true, Usage: ignored},
		&cli.BoolFlag{Name: "no-requeue", Hidden: true, Usage: ignored},
	}
}

// slurmNotes says, in one line, which of the Slurm options given shoal
// accepts without honouring, and why; "" when none was given.
func slurmNotes(c *cli.Context) string {
	var notes []string
	for _, n := range []struct{ flag, why string }{
		{"exclusive", "nodes are not reserved whole: the job waits for free slots"},
		{"mail-type", "no mail is sent"},
		{"mail-user", "no mail is sent"},
		{"qos", "no QOS"},
		{"signal", "no warning signal before the time limit"},
		{"requeue", "a job is retried on node failure up to --max-attempts"},
		{"no-requeue", "a job is retried on node failure up to --max-attempts"},
	} {
		if !c.IsSet(n.flag) {
			continue
		}
		what := "--" + n.flag
		if v := c.String(n.flag); v != "" && v != "true" {
			what += "=" + v
		}
		notes = append(notes, what+" ("+n.why+")")
	}
	if len(notes) == 0 {
		return ""
	}
	return "shoal: accepted, not honoured: " + strings.Join(notes, "; ")
}

// slurmSpec fills the spec from the flags Slurm users bring: name, begin,
// dependency, array.
func slurmSpec(c *cli.Context, sp *api.JobSpec, now time.Time) error {
	sp.Name = c.String("job-name")
	if strings.ContainsFunc(sp.Name, func(r rune) bool { return r < ' ' || r == 0x7f || r == '/' }) || len(sp.Name) > raftfsm.MaxNameLen {
		return usagef(c, "-J/--job-name %q: at most %d characters, no slash or control character", sp.Name, raftfsm.MaxNameLen)
	}
	if b := c.String("begin"); b != "" {
		t, err := parseBegin(b, now)
		if err != nil {
			return usagef(c, "%v", err)
		}
		sp.Begin = t.UTC()
	}
	if d := c.String("dependency"); d != "" {
		deps, err := parseDependency(d)
		if err != nil {
			return usagef(c, "%v", err)
		}
		sp.Depend = deps
	}
	if a := c.String("array"); a != "" {
		arr, err := parseArray(a)
		if err != nil {
			return usagef(c, "%v", err)
		}
		if sp.Immediate {
			return usagef(c, "--array and --immediate do not go together: an array's tasks queue")
		}
		sp.Array = &arr
	}
	if c.Command.Name == "run" && sp.Array != nil {
		return usagef(c, "shoal run follows one job; submit an array with 'shoal submit --array'")
	}
	return nil
}

// buildSubmit turns flags and the command line into a submit request. All
// checks that can be made here are: a bad job never reaches the cluster.
func buildSubmit(c *cli.Context) (api.SubmitRequest, error) {
	var req api.SubmitRequest
	args := c.Args().Slice()
	if len(args) == 0 {
		return req, usagef(c, "no command to run: put it after --, e.g. 'shoal %s -n 4 -- ./app'", c.Command.Name)
	}
	sp := &req.Spec
	sp.PPN, sp.Priority = c.Int("ppn"), c.Int("priority")
	if sp.PPN < 0 {
		return req, usagef(c, "--ppn must not be negative")
	}
	if c.Bool("slurm-script") && !c.IsSet("np") && !c.IsSet("nodes") {
		_ = c.Set("np", "1") // sbatch's default: one task
	}
	if err := parseJobSize(c, sp); err != nil {
		return req, err
	}
	if c.IsSet("hostfile") && c.IsSet("nodelist") {
		return req, usagef(c, "-f/--hostfile and -w/--nodelist: give one")
	}
	if l := c.String("nodelist"); l != "" {
		hosts, err := nodeList(l)
		if err != nil {
			return req, usagef(c, "-w/--nodelist: %v", err)
		}
		for _, h := range hosts {
			sp.Hostfile = append(sp.Hostfile, api.HostSlots{Host: h})
		}
	}
	if f := c.String("hostfile"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return req, usagef(c, "read hostfile: %v", err)
		}
		hs, err := placement.ParseHostfile(string(b))
		if err != nil {
			return req, usagef(c, "hostfile %s: %v", f, err)
		}
		sp.Hostfile = apiHostfile(hs)
	}
	sp.Relax = c.String("relax")
	switch sp.Relax {
	case "", "none", "loc", "dist", "loc+dist", "all":
	default:
		return req, usagef(c, "-r/--relax %q: use none, loc, dist, loc+dist or all", sp.Relax)
	}
	sp.Oversubscribe = c.Bool("oversubscribe") && !c.Bool("no-oversubscribe") && !c.Bool("exclusive")
	sp.Policy = c.String("policy")
	switch sp.Policy {
	case "", "netload", "paper", "load", "sequential", "random":
	default:
		return req, usagef(c, "--policy %q: use netload, paper, load, sequential or random", sp.Policy)
	}
	if a := c.Float64("alpha"); a != -1 {
		if a < 0 || a > 1 {
			return req, usagef(c, "--alpha %v must be within [0,1]", a)
		}
		sp.Alpha = &a
	}
	sp.Immediate, sp.Force = c.Bool("immediate"), c.Bool("force")
	if err := slurmSpec(c, sp, time.Now()); err != nil {
		return req, err
	}
	sp.MaxAttempts = c.Int("max-attempts")
	if t := c.String("timeout"); t != "" {
		d, err := parseTimeLimit(t)
		if err != nil {
			return req, usagef(c, "-t/--timeout: %v", err)
		}
		sp.Timeout = d
	}
	if sp.MaxAttempts < 1 {
		return req, usagef(c, "--max-attempts must be at least 1")
	}
	if err := applyConfineFlags(c, sp); err != nil {
		return req, err
	}
	env := envOf(c)
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return req, usagef(c, "--env %q: use K=V", kv)
		}
	}
	exported, err := exportEnv(c.String("export"), os.Environ())
	if err != nil {
		return req, usagef(c, "%v", err)
	}
	sp.Env = append(exported, env...)
	// Recorded as Slurm sets them in a job, for scripts and accounting that read them.
	for _, v := range []struct{ flag, name string }{{"account", "SLURM_JOB_ACCOUNT"}} {
		if c.IsSet(v.flag) {
			sp.Env = append(sp.Env, v.name+"="+c.String(v.flag))
		}
	}
	sp.Partition = c.String("partition")
	sp.Constraint = c.String("constraint")
	sp.Workdir = c.String("workdir")
	if sp.Workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return req, usagef(c, "no --workdir and no current directory: %v", err)
		}
		sp.Workdir = wd
	}
	sp.Batch = c.Bool("batch")
	if sp.Batch && c.Command.Name == "run" {
		return req, usagef(c, "--batch is for 'shoal submit SCRIPT'")
	}
	for _, f := range []struct{ flag, v string }{{"--output", c.String("output")}, {"-e/--error", c.String("error")}} {
		if err := jobfmt.CheckPattern(f.v); err != nil {
			return req, usagef(c, "%s %v", f.flag, err)
		}
	}
	sp.Output, sp.Error = c.String("output"), c.String("error")
	if sp.Output == "" && c.Bool("slurm-script") {
		// sbatch writes a script's output to the submit directory by default.
		sp.Output = "slurm-%j.out"
		if sp.Array != nil {
			sp.Output = "slurm-%A_%a.out"
		}
	}
	exe, err := exec.LookPath(args[0])
	if err != nil && sp.Batch && !strings.Contains(args[0], "/") {
		exe, err = exec.LookPath("./" + args[0]) // sbatch job.sh: the script in this directory
	}
	var cmdArgs []string
	if err != nil && sp.Batch {
		cmdArgs, err = scriptCommand(args[0]) // a script without its execute bit runs through its #! line
	}
	if err != nil {
		return req, usagef(c, "executable %q not found on this node: %v", args[0], err)
	}
	if cmdArgs == nil {
		if abs, err := filepath.Abs(exe); err == nil {
			exe = abs
		}
		cmdArgs = []string{exe}
	}
	exe = cmdArgs[len(cmdArgs)-1]
	if sp.Batch && sp.Name == "" {
		sp.Name = filepath.Base(exe) // sbatch names a job for its script
	}
	sp.Cmd = append(cmdArgs, args[1:]...)
	prog, err := probe.ScanProgram(sp.Cmd, probe.ProgramEnv{Getenv: jobGetenv(sp.Env), Workdir: sp.Workdir})
	if err != nil {
		return req, usagef(c, "read executable %s: %v", exe, err)
	}
	info := prog.ELF
	sp.MPI = c.String("mpi")
	switch sp.MPI {
	case "mpich", "openmpi", "none":
	case "":
		sp.MPI = prog.MPI
		if sp.MPI == "" && !sp.Batch && maxProcs(sp) > 1 {
			// N singletons of an MPI program each compute as rank 0 of 1 and
			// exit 0: wrong results and no error. Ask instead of guessing.
			return req, usagef(c, "cannot tell which MPI %s uses (%s): give --mpi mpich|openmpi|none (none: %d independent copies)",
				filepath.Base(sp.Cmd[0]), prog.Via, maxProcs(sp))
		}
		if sp.MPI == "" {
			sp.MPI = "none"
		}
	default:
		return req, usagef(c, "--mpi %q: use mpich, openmpi or none", sp.MPI)
	}
	// shoal run forwards its standard input to rank 0, as srun does, through
	// the MPI launcher (plain copies: to copy 0, on the head). A standard
	// input with nothing in it (the null device, an empty file) is not
	// forwarded: the launcher gets the null device, so its end of file comes
	// at the start. Forwarded, it can come after rank 0's proxy ended, and
	// MPICH's mpiexec then writes it to the proxy's closed control socket
	// and exits 255 ("write error (Bad file descriptor)") after a good run.
	sp.Stdin = c.Command.Name == "run" && stdinHasInput(c)
	pes := c.StringSlice("pe")
	switch {
	case len(pes) == 1 && pes[0] == "none":
	case len(pes) > 0:
		for _, p := range pes {
			kind, n, ok := strings.Cut(p, ":")
			count, err := strconv.Atoi(n)
			if !ok || kind == "" || err != nil || count < 1 {
				return req, usagef(c, "--pe %q: use KIND:COUNT per process, e.g. gpu:1, or none", p)
			}
			sp.PEs = append(sp.PEs, api.PENeed{Kind: strings.ToLower(kind), PerProc: count})
		}
	case info.NeedsGPU():
		sp.PEs, sp.PEsDetected = []api.PENeed{{Kind: "gpu", PerProc: 1}}, true
	}
	u, err := user.Current()
	if err != nil {
		return req, cli.Exit("who am I: "+err.Error(), exitFailure)
	}
	req.Owner = u.Username
	var rid [12]byte
	_, _ = rand.Read(rid[:])
	req.RequestID = hex.EncodeToString(rid[:])
	return req, nil
}

// maxProcs is the most processes the job may run at once.
func maxProcs(sp *api.JobSpec) int {
	if sp.Elastic != nil && sp.Elastic.MaxNP > sp.NP {
		return sp.Elastic.MaxNP
	}
	return sp.NP
}

// jobGetenv reads the job's environment as it will be, for finding what
// the program loads (PYTHONPATH, R_LIBS...). Without PATH or HOME the
// agent gives the job its default PATH and the owner's home: the caller's.
func jobGetenv(env []string) func(string) string {
	return func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		switch k {
		case "PATH":
			return "/usr/local/bin:/usr/bin:/bin"
		case "HOME":
			return os.Getenv(k)
		}
		return ""
	}
}

func submitCommand() *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "submit a batch job; print its ID",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: `Queues the job and returns at once; follow it with 'shoal job ID' and 'shoal logs ID -f'.

Examples:
  shoal submit -n 8 -- ./ring
  id=$(shoal submit -n 16 --ppn 4 --no-oversubscribe -- ./solver input.dat)
  shoal submit -n 2 --pe gpu:1 --mpi none -- ./train.py
  shoal submit --array 0-99%10 -- ./sweep.sh      # 100 tasks, 10 at once
  shoal submit -d afterok:$id -- ./analyse.sh     # once job $id has succeeded
  shoal submit mpi.sh        # a script with its options in #SHOAL lines:

    #!/bin/sh
    #SHOAL -n 4 --ppn 2 -J ring --output ring-%j.out
    srun ./ring 10

  shoal submit job.slurm     # a Slurm script, unchanged:

    #!/bin/bash
    #SBATCH -J hello -N 2 --ntasks-per-node=4 -t 00:10:00
    #SBATCH -o hello-%j.out -p batch    # -o is the output file here, as in sbatch
    srun ./hello                        # or mpirun/mpiexec: a step on the allocation

#SBATCH lines take sbatch's options with sbatch's meaning (a #SHOAL line
wins where both set one); -p/--partition runs the job in a partition
('shoal partitions') and -C/--constraint on nodes with those features;
--mail-*, --qos, --signal and --requeue are accepted and named at submit as
not honoured.`,
		Flags: append(jobFlags(), &cli.BoolFlag{Name: "sbatch", Hidden: true, Usage: "submitted through sbatch: print sbatch's \"Submitted batch job ID\" unless --parsable"}),
		Action: func(c *cli.Context) error {
			_, res, err := submit(c)
			if err != nil {
				return err
			}
			if c.Bool("sbatch") && !c.Bool("parsable") {
				fmt.Fprintf(c.App.Writer, "Submitted batch job %d\n", res.ID)
				return nil
			}
			fmt.Fprintln(c.App.Writer, res.ID)
			return nil
		},
	}
}

// submit builds the job from the flags and submits it.
func submit(c *cli.Context) (*api.Client, api.SubmitResponse, error) {
	req, err := buildSubmit(c)
	if err != nil {
		return nil, api.SubmitResponse{}, err
	}
	cl, err := newClient(c)
	if err != nil {
		return nil, api.SubmitResponse{}, err
	}
	if c.IsSet("nodelist") || c.IsSet("exclude") {
		if err := applyNodeSets(c, cl, &req.Spec); err != nil {
			return nil, api.SubmitResponse{}, err
		}
	}
	if note := slurmNotes(c); note != "" {
		fmt.Fprintln(c.App.ErrWriter, note)
	}
	res, err := cl.Submit(c.Context, req)
	if err != nil {
		return nil, api.SubmitResponse{}, apiError(err)
	}
	return cl, res, nil
}

// nodeList reads -w/--nodelist as sbatch does: a host list (n[01-04],gpu1),
// or, when it names a file (it has a slash), the names in that file.
func nodeList(l string) ([]string, error) {
	if strings.Contains(l, "/") {
		b, err := os.ReadFile(l)
		if err != nil {
			return nil, err
		}
		l = strings.Join(strings.Fields(string(b)), ",")
	}
	return jobfmt.ExpandHosts(l)
}

// applyNodeSets checks -w/--nodelist against the cluster's nodes and takes
// -x/--exclude out of the job's hosts (those of -w or -f, or else every
// node): placement chooses among a job's hosts only, so excluding is
// naming the rest.
func applyNodeSets(c *cli.Context, cl *api.Client, sp *api.JobSpec) error {
	nodes, err := cl.Nodes(c.Context)
	if err != nil {
		return apiError(err)
	}
	known := map[string]bool{}
	for _, n := range nodes {
		known[n.Name] = true
	}
	if c.IsSet("nodelist") {
		for _, h := range sp.Hostfile {
			if !known[h.Host] {
				return usagef(c, "-w/--nodelist: no node %q in the cluster (see 'shoal nodes')", h.Host)
			}
		}
	}
	if !c.IsSet("exclude") {
		return nil
	}
	excl, err := nodeList(c.String("exclude"))
	if err != nil {
		return usagef(c, "-x/--exclude: %v", err)
	}
	if len(sp.Hostfile) == 0 {
		for _, n := range nodes {
			sp.Hostfile = append(sp.Hostfile, api.HostSlots{Host: n.Name})
		}
	}
	sp.Hostfile = slices.DeleteFunc(sp.Hostfile, func(h api.HostSlots) bool { return slices.Contains(excl, h.Host) })
	if len(sp.Hostfile) == 0 {
		return usagef(c, "-x/--exclude %s leaves no node to run on", c.String("exclude"))
	}
	return nil
}

// envList is --env's value: each use adds one K=V whole. A string slice
// flag splits its values at commas, and `--env OMPI_MCA_btl=self,tcp`
// became OMPI_MCA_btl=self and a malformed "tcp".
type envList []string

func (e *envList) Set(v string) error { *e = append(*e, v); return nil }
func (e *envList) String() string     { return strings.Join(*e, " ") }

// envOf is the --env values of c, in order.
func envOf(c *cli.Context) []string {
	if e, ok := c.Generic("env").(*envList); ok && e != nil {
		return *e
	}
	return nil
}
