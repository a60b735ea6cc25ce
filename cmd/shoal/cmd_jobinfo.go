package main

import (
	"fmt"
	"io"
	"os/user"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

// fetchJob reads the job named by the one argument (an ID, or ARRAY_TASK
// for a task of an array), with the client used.
func fetchJob(c *cli.Context) (*api.Client, api.Job, error) {
	cl, j, _, err := fetchRef(c)
	return cl, j, err
}

// consistentFlag asks a read of jobs for the leader's state rather than
// the agent's copy, which may be a moment behind.
func consistentFlag() cli.Flag {
	return &cli.BoolFlag{Name: "consistent", Usage: "read as the leader sees it now: the agent first catches up with the leader (one round trip to it)"}
}

func jobsCommand() *cli.Command {
	return &cli.Command{
		Name:  "jobs",
		Usage: "list jobs",
		Description: `Lists jobs by ID, fetching them from the agent a page at a time.
With --watch it lists them again each time the replicated state changes
(the agent answers a blocking read at the change, so nothing polls),
until interrupted; with --json each listing is one array.

Examples:
  shoal jobs
  shoal jobs --user alice --state queued,running
  shoal jobs --watch --state queued,running
  shoal jobs --json | jq '.[] | select(.state == "running") | .id'`,
		Flags: append(clientFlags(), jsonFlag(),
			&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "list again at every change, until interrupted"},
			&cli.StringFlag{Name: "user", Usage: "only the jobs of user `NAME`"},
			&cli.StringSliceFlag{Name: "state", Usage: "only jobs in `STATE` (queued, launching, running, done, failed, killed); repeat or separate by commas"},
			consistentFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "jobs takes no arguments")
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			var states []string
			for _, s := range c.StringSlice("state") {
				states = append(states, strings.Split(s, ",")...)
			}
			q := api.JobsQuery{User: c.String("user"), States: states, Consistent: c.Bool("consistent")}
			if c.Bool("watch") {
				return watchJobs(c, cl, q)
			}
			js, err := cl.JobsWhere(c.Context, q)
			if err != nil {
				return apiError(err)
			}
			if c.Bool("json") {
				return printJSON(c, js)
			}
			writeJobs(c.App.Writer, js, time.Now())
			return nil
		},
	}
}

// watchJobs lists the jobs, then waits on the agent for the replicated
// state to move past the index read before the listing and lists them
// again, until interrupted. A change during a listing wakes the next wait
// at once, so none is missed.
func watchJobs(c *cli.Context, cl *api.Client, q api.JobsQuery) error {
	var index uint64
	for {
		next, err := cl.WaitJobs(c.Context, index, followWait)
		if c.Context.Err() != nil {
			return nil
		}
		if err != nil {
			return apiError(err)
		}
		if next == index && index != 0 {
			continue // the wait ended with no change
		}
		if next == 0 {
			pause(c.Context, pollEvery) // an agent that does not block
		}
		index = next
		js, err := cl.JobsWhere(c.Context, q)
		if c.Context.Err() != nil {
			return nil
		}
		if err != nil {
			return apiError(err)
		}
		if c.Bool("json") {
			if err := printJSON(c, js); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(c.App.Writer, "\n# %s, state index %d\n", time.Now().Format("15:04:05"), index)
		writeJobs(c.App.Writer, js, time.Now())
	}
}

// writeJobs prints the jobs table. The queued tasks of an array that
// follow each other fold into one row, as squeue shows them: 12_[3-99%10].
func writeJobs(w io.Writer, js []api.Job, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tOWNER\tPRIO\tNP\tATTEMPT\tHOSTS\tAGE\tCOMMAND")
	for i := 0; i < len(js); i++ {
		j := js[i]
		id := displayID(j)
		if pendingTask(j) {
			tasks := []int{*j.ArrayTaskID}
			for i+1 < len(js) && pendingTask(js[i+1]) && js[i+1].ArrayJobID == j.ArrayJobID && js[i+1].Held == j.Held {
				i++
				tasks = append(tasks, *js[i].ArrayTaskID)
			}
			if len(tasks) > 1 || j.ArrayLimit > 0 {
				limit := ""
				if j.ArrayLimit > 0 {
					limit = fmt.Sprintf("%%%d", j.ArrayLimit)
				}
				id = fmt.Sprintf("%d_[%s%s]", j.ArrayJobID, foldIndices(tasks), limit)
			}
		}
		hosts := hostsString(j.Hosts)
		if j.Degraded {
			hosts += " (degraded)"
		}
		width := 48
		switch {
		case hosts == "" && j.State == "queued" && j.WaitReason != "":
			// squeue's (Reason) where a pending job's nodes would be.
			hosts, width = "("+j.WaitReason+")", 64
		case hosts == "":
			hosts = "-"
		}
		state := j.State
		if j.Held {
			state += " (held)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%d\t%d\t%s\t%s\t%s\n", id, cell(or(j.Name, "-"), 20), cell(state, 16), cell(j.Owner, 16), j.EffectivePriority, j.Spec.NP, j.Attempt,
			cell(hosts, width), ageAt(j.SubmittedAt, now), cell(strings.Join(j.Spec.Cmd, " "), 40))
	}
	tw.Flush()
}

// pendingTask reports whether j is a queued task of an array, which the
// listing folds with its neighbours.
func pendingTask(j api.Job) bool {
	return j.ArrayJobID != 0 && j.ArrayTaskID != nil && j.State == "queued"
}

func ageAt(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func jobCommand() *cli.Command {
	return &cli.Command{
		Name:      "job",
		Usage:     "show one job: spec, state, allocation, attempts, timings",
		ArgsUsage: "ID",
		Description: `The agent answers from its copy of the cluster state. A job ID its copy has
not seen yet (one just submitted through another agent) is looked up again
once the copy has caught up with the leader, so "no job" means there is
none; --consistent also waits for the leader's state for a job the copy
holds, so a change made through another agent a moment ago shows.

Examples:
  shoal job 12
  shoal job 12 --json
  shoal job 12 --consistent   # as the leader sees it now`,
		Flags: append(clientFlags(), jsonFlag(), consistentFlag()),
		Action: func(c *cli.Context) error {
			_, j, err := fetchJob(c)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, j)
			}
			writeJob(c, j)
			return nil
		},
	}
}

func writeJob(c *cli.Context, j api.Job) {
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, safe(v)) }
	row("ID", strconv.FormatUint(j.ID, 10))
	row("State", j.State)
	if j.ExitCode != nil {
		row("Exit code", strconv.Itoa(*j.ExitCode))
	}
	if j.Reason != "" {
		row("Reason", j.Reason)
	}
	if j.WaitReason != "" {
		row("Waiting", j.WaitReason)
	}
	row("Owner", j.Owner)
	if j.Name != "" {
		row("Name", j.Name)
	}
	if j.ArrayJobID != 0 && j.ArrayTaskID != nil {
		lim := ""
		if j.ArrayLimit > 0 {
			lim = fmt.Sprintf(" (at most %d tasks at once)", j.ArrayLimit)
		}
		row("Array", fmt.Sprintf("%d, task %d%s", j.ArrayJobID, *j.ArrayTaskID, lim))
	}
	row("Priority", fmt.Sprintf("%d (effective %.3f with the owner's fair share)", j.Spec.Priority, j.EffectivePriority))
	if j.Held {
		row("Held", "yes: 'shoal release "+displayID(j)+"' lets it run")
	}
	if !j.Spec.Begin.IsZero() {
		row("Begin", j.Spec.Begin.Local().Format(time.DateTime))
	}
	if len(j.Spec.Depend) > 0 {
		var ds []string
		for _, d := range j.Spec.Depend {
			s := d.Type
			for _, id := range d.IDs {
				s += ":" + strconv.FormatUint(id, 10)
			}
			ds = append(ds, s)
		}
		row("Dependency", strings.Join(ds, ","))
	}
	row("Command", strings.Join(j.Spec.Cmd, " "))
	row("Workdir", j.Spec.Workdir)
	row("Processes", fmt.Sprintf("%d (ppn %d, mpi %s, policy %s)", j.Spec.NP, j.Spec.PPN, j.Spec.MPI, or(j.Spec.Policy, "netload")))
	if len(j.Spec.PEs) > 0 {
		var pes []string
		for _, p := range j.Spec.PEs {
			pes = append(pes, fmt.Sprintf("%s:%d", p.Kind, p.PerProc))
		}
		how := "declared"
		if j.Spec.PEsDetected {
			how = "detected in the executable's libraries"
		}
		row("PEs per process", strings.Join(pes, ",")+" ("+how+")")
	}
	if l := limitsString(j.Spec); l != "" {
		row("Limits", l)
	}
	row("Oversubscribe", strconv.FormatBool(j.Spec.Oversubscribe))
	row("Hosts", or(hostsString(j.Hosts), "-"))
	if j.Degraded {
		row("Degraded", j.DegradedReason)
	}
	row("Submitted", j.SubmittedAt.Local().Format(time.DateTime))
	if j.StartedAt != nil {
		row("Started", j.StartedAt.Local().Format(time.DateTime))
	}
	if j.EndedAt != nil {
		row("Ended", j.EndedAt.Local().Format(time.DateTime))
	}
	row("Attempts", fmt.Sprintf("%d of at most %d", j.Attempt, j.Spec.MaxAttempts))
	if e := j.Elastic; e != nil {
		writeElastic(row, e)
	}
	tw.Flush()
	for _, a := range j.Attempts {
		line := fmt.Sprintf("  #%d %s on %s", a.N, a.State, hostsString(a.Hosts))
		if a.ExitCode != nil {
			line += fmt.Sprintf(", exit %d", *a.ExitCode)
		}
		if a.Reason != "" {
			line += ": " + a.Reason
		}
		if p := a.Progress; p != nil {
			line += fmt.Sprintf(" [iterations %d-%d]", p.FirstIter, p.Iter)
		}
		if len(a.GPUs) > 0 {
			var gs []string
			for _, g := range a.GPUs {
				ids := make([]string, len(g.Indices))
				for i, x := range g.Indices {
					ids[i] = strconv.Itoa(x)
				}
				gs = append(gs, g.Node+":"+strings.Join(ids, ","))
			}
			line += " [GPUs " + strings.Join(gs, " ") + "]"
		}
		fmt.Fprintln(c.App.Writer, safe(line))
		writeUsage(c.App.Writer, a)
		writeSteps(c.App.Writer, a)
	}
	if e := j.Elastic; e != nil && len(e.History) > 0 {
		fmt.Fprintln(c.App.Writer, "Resizes:")
		for _, r := range e.History {
			fmt.Fprintf(c.App.Writer, "  %s attempt %d: %d -> %d processes: %s\n", r.At.Local().Format(time.TimeOnly), r.Attempt, r.FromNP, r.ToNP, safe(r.Reason))
		}
	}
}

// writeSteps lists a batch attempt's MPI launches under it, as sacct
// lists a job's steps: ID, exit (or running), duration, nodes, command.
func writeSteps(w io.Writer, a api.Attempt) {
	for _, st := range a.Steps {
		status := "running"
		switch {
		case st.ExitCode != nil:
			status = fmt.Sprintf("exit %d", *st.ExitCode)
		case st.EndedAt != nil:
			status = "ended, exit unknown"
		}
		took := ""
		if st.StartedAt != nil && st.EndedAt != nil {
			took = ", " + st.EndedAt.Sub(*st.StartedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintln(w, safe(fmt.Sprintf("    step %s %s%s on %s: %s", st.ID, status, took, st.Nodes, strings.Join(st.Cmd, " "))))
	}
}

// writeElastic adds the elastic rows of `shoal job`.
func writeElastic(row func(k, v string), e *api.Elastic) {
	nodes := func(np int) string {
		if e.Unit > 1 {
			return fmt.Sprintf("%d nodes (%d processes)", np/e.Unit, np)
		}
		return fmt.Sprintf("%d", np)
	}
	constraint := fmt.Sprintf("budget %.4g node-hours, %.4g spent", e.BudgetNH, e.SpentNH)
	if e.Deadline != nil {
		constraint = fmt.Sprintf("deadline %s (in %s), %.4g node-hours spent", e.Deadline.Local().Format(time.DateTime),
			time.Until(*e.Deadline).Round(time.Second), e.SpentNH)
	}
	row("Elastic", fmt.Sprintf("%d:%d processes (%d per node), %s", e.MinNP, e.MaxNP, e.Unit, constraint))
	iters := fmt.Sprintf("%d of %d", e.Iter, e.Iterations)
	if e.ResumedFrom > 0 {
		iters += fmt.Sprintf(" (this attempt resumed from %d)", e.ResumedFrom)
	}
	row("Iterations", iters)
	if e.Rate > 0 {
		rate := fmt.Sprintf("%.3g iterations/s", e.Rate)
		if e.CommShare > 0 {
			rate += fmt.Sprintf(", %.0f%% communicating", 100*e.CommShare)
		}
		row("Rate", rate)
	}
	if e.Predicted != nil {
		row("Predicted finish", e.Predicted.Local().Format(time.DateTime))
	}
	row("Nodes", fmt.Sprintf("current %s, target %s", nodes(e.CurrentNP), nodes(e.TargetNP)))
	restart := fmt.Sprintf("%.1fs (assumed until the first resize)", e.RestartCostS)
	if e.RestartKnown {
		restart = fmt.Sprintf("%.1fs (measured)", e.RestartCostS)
	}
	row("Restart cost", restart)
	row("Checkpoints", fmt.Sprintf("%d, in %s", e.Checkpoints, e.CheckpointDir))
	row("Decision", e.Decision)
	if e.FixedSize != "" {
		row("Fixed size", e.FixedSize)
	}
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func killCommand() *cli.Command {
	return &cli.Command{
		Name:      "kill",
		Usage:     "kill a job on every node it runs on, or a whole array",
		ArgsUsage: "ID | ARRAY_TASK",
		Description: `Only the job's owner (or root) may kill it. An array's ID kills every
task of it that has not ended (like scancel); ARRAY_TASK kills one task.

Examples:
  shoal kill 12
  shoal kill 40_7      # task 7 of array 40`,
		Flags: clientFlags(),
		Action: func(c *cli.Context) error {
			cl, j, array, err := fetchRef(c)
			if err != nil {
				return err
			}
			u, err := user.Current()
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			if err := cl.KillWith(c.Context, j.ID, api.KillRequest{User: u.Username, Array: array}); err != nil {
				return apiError(err)
			}
			if array {
				fmt.Fprintf(c.App.ErrWriter, "shoal: array %d killed (every task that had not ended)\n", j.ID)
			} else {
				fmt.Fprintf(c.App.ErrWriter, "shoal: job %s killed\n", displayID(j))
			}
			return nil
		},
	}
}

// fetchRef reads the job the one argument names (ID or ARRAY_TASK) and
// says whether it names a whole array: an array's own ID, given alone.
func fetchRef(c *cli.Context) (*api.Client, api.Job, bool, error) {
	if c.NArg() != 1 {
		return nil, api.Job{}, false, usagef(c, "give one job ID (or ARRAY_TASK, e.g. 12_3)")
	}
	ref, err := jobRef(c.Args().First())
	if err != nil {
		return nil, api.Job{}, false, usagef(c, "%v", err)
	}
	cl, err := newClient(c)
	if err != nil {
		return nil, api.Job{}, false, err
	}
	get := cl.JobRef
	if c.Bool("consistent") {
		get = cl.ConsistentJobRef
	}
	j, err := get(c.Context, ref)
	if err != nil {
		return nil, api.Job{}, false, apiError(err)
	}
	return cl, j, !strings.Contains(ref, "_") && j.ArrayJobID == j.ID && j.ArrayJobID != 0, nil
}

// displayID is a job's ID as Slurm users read it: 12, or 40_7 for a task.
func displayID(j api.Job) string {
	if j.ArrayJobID != 0 && j.ArrayTaskID != nil {
		return fmt.Sprintf("%d_%d", j.ArrayJobID, *j.ArrayTaskID)
	}
	return strconv.FormatUint(j.ID, 10)
}

// holdCommand is shoal hold (hold true) and shoal release.
func holdCommand(hold bool) *cli.Command {
	name, usage, desc := "release", "let a held job be placed again", `Releases a job held by 'shoal hold'; an array's ID releases all its held tasks.

Example:
  shoal release 12`
	if hold {
		name, usage, desc = "hold", "keep a queued job from starting until 'shoal release'", `Holds a queued job (like scontrol hold): it stays queued, and is not placed
until 'shoal release ID'. An array's ID holds all its queued tasks. Only the
job's owner (or root) may.

Examples:
  shoal hold 12
  shoal hold 40        # every queued task of array 40`
	}
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "ID | ARRAY_TASK", Description: desc,
		Flags: clientFlags(),
		Action: func(c *cli.Context) error {
			cl, j, array, err := fetchRef(c)
			if err != nil {
				return err
			}
			u, err := user.Current()
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			res, err := cl.Hold(c.Context, j.ID, hold, api.HoldRequest{User: u.Username, Array: array})
			if err != nil {
				return apiError(err)
			}
			what := "job " + displayID(j)
			if array {
				what = fmt.Sprintf("array %d (%d tasks)", j.ID, len(res.Jobs))
			}
			done := "released"
			if hold {
				done = "held"
			}
			fmt.Fprintf(c.App.ErrWriter, "shoal: %s %s\n", what, done)
			return nil
		},
	}
}

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a job's output",
		ArgsUsage: "ID",
		Description: `Prints the stdout (and, on stderr, the stderr) of the job's latest attempt.

Examples:
  shoal logs 12
  shoal logs -f 12          # follow until the job ends`,
		Flags: append(clientFlags(),
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing until the job ends"},
			&cli.IntFlag{Name: "attempt", Usage: "show attempt `N` instead of the latest"}),
		Action: func(c *cli.Context) error {
			cl, j, err := fetchJob(c)
			if err != nil {
				return err
			}
			id := j.ID
			n := c.Int("attempt")
			if n == 0 {
				n = startedAttempt(j)
			}
			if n == 0 && !c.Bool("follow") {
				return cli.Exit(fmt.Sprintf("job %d has not started yet: no output", id), exitFailure)
			}
			// Wait for its first start: each read blocks until the state
			// moves past the last answer's index.
			var index uint64
			for n == 0 {
				var next uint64
				if j, next, err = cl.JobAfter(c.Context, id, index, followWait); err != nil || next == 0 {
					if c.Context.Err() != nil {
						return c.Context.Err()
					}
					pause(c.Context, pollEvery) // an error, or an agent that does not block
				}
				if err == nil {
					index, n = next, startedAttempt(j)
				}
				if terminal(j.State) && n == 0 {
					return cli.Exit(fmt.Sprintf("job %d ended without starting: %s", id, j.Reason), exitFailure)
				}
			}
			follow := "0"
			if c.Bool("follow") {
				follow = "1"
			}
			for _, s := range []struct {
				name string
				w    interface{ Write([]byte) (int, error) }
			}{{"stdout", c.App.Writer}, {"stderr", c.App.ErrWriter}} {
				path := fmt.Sprintf("/v1/jobs/%d/logs?stream=%s&attempt=%d&follow=%s", id, s.name, n, follow)
				if err := cl.Stream(c.Context, path, s.w); err != nil {
					return apiError(err)
				}
			}
			return nil
		},
	}
}
