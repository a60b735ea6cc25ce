package main

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
)

const scontrolHelp = `scontrol shows and changes jobs and nodes, as Slurm's scontrol does, for the
subcommands a user's script uses:

  show job [ID]          a job (every job without ID) as Key=Value lines
  show node [NAME]       a node (every node without NAME)
  hold ID...             keep queued jobs from starting
  release ID...          let held jobs start
  update JobId=ID TimeLimit=T
                         change a queued job's time limit (Slurm's formats;
                         only root may raise it)
  requeue ID...          put jobs back in the queue: a running one's
                         attempt ends, a finished one runs again
  requeuehold ID...      the same, and hold them until released

Examples:
  scontrol show job 12
  scontrol show job 12 | grep -o 'JobState=[A-Z]*'
  scontrol hold 12
  scontrol update JobId=12 TimeLimit=30:00
  scontrol requeue 12`

func scontrol(c *cli.Context, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" || args[0] == "--usage" {
		writeHelp(c, scontrolHelp)
		if len(args) == 0 {
			return cli.Exit("", exitUsage)
		}
		return nil
	}
	verb, rest := strings.ToLower(args[0]), args[1:]
	switch verb {
	case "show":
		if len(rest) == 0 {
			return cli.Exit("scontrol: show what? give 'show job [ID]' or 'show node [NAME]'", exitUsage)
		}
		switch strings.ToLower(rest[0]) {
		case "job", "jobs", "jobid":
			return scontrolShowJobs(c, rest[1:])
		case "node", "nodes":
			return scontrolShowNodes(c, rest[1:])
		}
		return cli.Exit(fmt.Sprintf("scontrol: show %s: shoal shows 'job' and 'node'", rest[0]), exitUsage)
	case "hold", "uhold", "release":
		if len(rest) == 0 {
			return cli.Exit("scontrol: "+verb+": give the job IDs", exitUsage)
		}
		return scontrolHold(c, verb != "release", rest)
	case "update":
		return scontrolUpdate(c, rest)
	case "requeue", "requeuehold":
		if len(rest) == 0 {
			return cli.Exit("scontrol: "+verb+": give the job IDs", exitUsage)
		}
		return scontrolRequeue(c, verb == "requeuehold", rest)
	}
	return cli.Exit(fmt.Sprintf("scontrol: invalid keyword: %s (see 'scontrol --help')", args[0]), exitUsage)
}

func scontrolShowJobs(c *cli.Context, ids []string) error {
	js, err := slurmJobs(c, splitIDs(ids))
	if err != nil {
		return err
	}
	if len(js) == 0 {
		fmt.Fprintln(c.App.Writer, "No jobs in the system")
		return nil
	}
	now := time.Now()
	for i, j := range js {
		if i > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		f := func(l byte) string { v, _ := squeueField(j, l, now); return v }
		long, _ := slurmState(j)
		reason := "None"
		if long == "PENDING" {
			reason = pendingReason(j, now)
		}
		name := f('j')
		lines := [][]string{
			{"JobId=" + strconv.FormatUint(j.ID, 10), "JobName=" + name},
			{"UserId=" + j.Owner, "Account=" + valueOr(f('a'), "(null)")},
			{"Priority=" + strconv.FormatFloat(j.EffectivePriority, 'f', -1, 64), "Held=" + strconv.FormatBool(j.Held)},
			{"JobState=" + long, "Reason=" + reason, "Dependency=" + dependency(j)},
			{"Requeue=" + strconv.FormatBool(j.Spec.MaxAttempts != 1), "Restarts=" + strconv.Itoa(max(j.Attempt-1, 0)), "ExitCode=" + slurmExitCode(j.ExitCode)},
			{"RunTime=" + slurmElapsed(jobUsed(j, now)), "TimeLimit=" + f('l')},
			{"SubmitTime=" + f('V'), "StartTime=" + f('S'), "EndTime=" + f('e')},
			{"Partition=" + f('P'), "NodeList=" + valueOr(f('N'), "(null)")},
			{"NumNodes=" + f('D'), "NumCPUs=" + f('C'), "NumTasks=" + strconv.Itoa(max(j.Spec.NP, 1)), "CPUs/Task=" + strconv.Itoa(max(j.Spec.CPUsPerRank, 1))},
			{"Command=" + valueOr(strings.Join(j.Spec.Cmd, " "), "(null)")},
			{"WorkDir=" + j.Spec.Workdir},
		}
		if j.ArrayJobID != 0 && j.ArrayTaskID != nil {
			lines[0] = append(lines[0], "ArrayJobId="+strconv.FormatUint(j.ArrayJobID, 10), "ArrayTaskId="+strconv.Itoa(*j.ArrayTaskID))
		}
		if j.Spec.Output != "" {
			lines = append(lines, []string{"StdOut=" + j.Spec.Output})
		}
		for k, l := range lines {
			indent := "   "
			if k == 0 {
				indent = ""
			}
			fmt.Fprintln(c.App.Writer, indent+strings.Join(l, " "))
		}
	}
	return nil
}

func valueOr(v, empty string) string {
	if v == "" {
		return empty
	}
	return v
}

// dependency is scontrol's Dependency=: afterok:12,afterany:13, or (null).
func dependency(j api.Job) string {
	var parts []string
	for _, d := range j.Spec.Depend {
		for _, id := range d.IDs {
			parts = append(parts, d.Type+":"+strconv.FormatUint(id, 10))
		}
	}
	if len(parts) == 0 {
		return "(null)"
	}
	return strings.Join(parts, ",")
}

// splitIDs reads IDs given as separate words or comma lists.
func splitIDs(words []string) []string {
	var out []string
	for _, w := range words {
		for _, id := range strings.Split(w, ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}

func scontrolShowNodes(c *cli.Context, names []string) error {
	cl, err := newClient(c)
	if err != nil {
		return err
	}
	nodes, err := cl.Nodes(c.Context)
	if err != nil {
		return apiError(err)
	}
	var only []string
	for _, n := range names {
		hs, err := jobfmt.ExpandHosts(n)
		if err != nil {
			return cli.Exit("scontrol: show node "+n+": "+err.Error(), exitUsage)
		}
		only = append(only, hs...)
	}
	shown := 0
	for _, n := range nodes {
		if len(only) > 0 && !slices.Contains(only, n.Name) {
			continue
		}
		if shown > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		shown++
		long, _ := sinfoNode{node: n}.state()
		if long == "idle" {
			long = "IDLE" // without the jobs, busy and idle nodes are told apart by sinfo
		}
		fmt.Fprintf(c.App.Writer, "NodeName=%s Arch=x86_64\n   CPUTot=%d CPULoad=%.2f\n   RealMemory=%d FreeMem=%.0f\n   State=%s Reason=%s\n   Partitions=%s\n",
			n.Name, max(n.Threads, n.Cores), n.Load.M1, n.MemTotal>>20, n.MemAvail.Now/(1<<20), strings.ToUpper(long), valueOr(n.Unconfined, "(null)"), slurmPartition)
	}
	if shown == 0 && len(only) > 0 {
		return cli.Exit("scontrol: error: Node "+strings.Join(names, ",")+" not found", exitFailure)
	}
	return nil
}

// eachJob resolves each of ids (IDs, ARRAY_TASKs, comma lists) and calls
// act with the caller's name, the job and whether the ID names a whole
// array; it stops at the first failure.
func eachJob(c *cli.Context, ids []string, act func(cl *api.Client, me string, j api.Job, array bool) error) error {
	u, err := user.Current()
	if err != nil {
		return cli.Exit("scontrol: "+err.Error(), exitFailure)
	}
	cl, err := newClient(c)
	if err != nil {
		return err
	}
	for _, id := range splitIDs(ids) {
		ref, err := jobRef(id)
		if err != nil {
			return cli.Exit("scontrol: "+err.Error(), exitUsage)
		}
		j, err := cl.JobRef(c.Context, ref)
		if err != nil {
			return cli.Exit("scontrol: error: Invalid job id specified: "+id, exitFailure)
		}
		array := !strings.Contains(ref, "_") && j.ArrayJobID == j.ID && j.ArrayJobID != 0
		if err := act(cl, u.Username, j, array); err != nil {
			return apiError(err)
		}
	}
	return nil
}

func scontrolHold(c *cli.Context, hold bool, ids []string) error {
	return eachJob(c, ids, func(cl *api.Client, me string, j api.Job, array bool) error {
		_, err := cl.Hold(c.Context, j.ID, hold, api.HoldRequest{User: me, Array: array})
		return err
	})
}

// scontrolUpdate is `scontrol update JobId=ID TimeLimit=T`: the only
// field shoal lets change on a queued job.
func scontrolUpdate(c *cli.Context, args []string) error {
	var id, limit string
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return cli.Exit(fmt.Sprintf("scontrol: update: %q is not KEY=VALUE (e.g. JobId=12 TimeLimit=30:00)", kv), exitUsage)
		}
		switch strings.ToLower(k) {
		case "jobid", "job":
			id = v
		case "timelimit":
			limit = v
		default:
			return cli.Exit(fmt.Sprintf("scontrol: update: shoal changes a queued job's TimeLimit only, not %s", k), exitUsage)
		}
	}
	if id == "" || limit == "" {
		return cli.Exit("scontrol: update: give JobId=ID TimeLimit=T (e.g. scontrol update JobId=12 TimeLimit=30:00)", exitUsage)
	}
	d, err := parseTimeLimit(limit)
	if err != nil {
		return cli.Exit("scontrol: update: "+err.Error(), exitUsage)
	}
	return eachJob(c, []string{id}, func(cl *api.Client, me string, j api.Job, array bool) error {
		_, err := cl.Update(c.Context, j.ID, api.UpdateRequest{User: me, Array: array, Timeout: d})
		return err
	})
}

// scontrolRequeue is `scontrol requeue|requeuehold ID...`.
func scontrolRequeue(c *cli.Context, hold bool, ids []string) error {
	return eachJob(c, ids, func(cl *api.Client, me string, j api.Job, _ bool) error {
		return cl.Requeue(c.Context, j.ID, api.RequeueRequest{User: me, Hold: hold})
	})
}
