package main

import (
	"cmp"
	"fmt"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

var squeueOpts = []slurmOpt{
	{"noheader", 'h', false}, {"format", 'o', true}, {"jobs", 'j', true}, {"user", 'u', true},
	{"states", 't', true}, {"name", 'n', true}, {"me", 0, false}, {"array", 'r', false},
	{"partition", 'p', true}, {"account", 'A', true}, {"long", 'l', false}, {"all", 'a', false},
	{"sort", 'S', true}, {"help", 0, false}, {"usage", 0, false},
}

const squeueHelp = `squeue lists the jobs that have not ended, as Slurm's squeue does, in
Slurm's columns: JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON).

Options: -h/--noheader, -o/--format (%[.][width]LETTER: %i %A %F %K %j %u %t %T %M
%l %D %C %N %R %r %P %a %V %S %e %Q %Z %o), -j/--jobs IDS, -u/--user USERS,
--me, -t/--states (PD,R,CD,F,CA,TO,... or all), -n/--name NAMES, -p/--partition
(the one partition is "all"). -l, -a, -r and -S are accepted.

Examples:
  squeue
  squeue --me -h -o "%i %T"
  squeue -j 12,13 -t all`

// squeue prints the queue.
func squeue(c *cli.Context, args []string) error {
	a, err := parseSlurmArgs("squeue", args, squeueOpts)
	if err != nil {
		return cli.Exit(err.Error(), exitUsage)
	}
	if a.has("help") || a.has("usage") {
		writeHelp(c, squeueHelp)
		return nil
	}
	format := squeueDefaultFormat
	if a.has("format") {
		format = a.last("format")
	}
	pieces, err := parseSlurmFormat(format, func(l byte) bool { _, ok := squeueField(api.Job{}, l, time.Time{}); return ok })
	if err != nil {
		return cli.Exit("squeue: "+err.Error(), exitUsage)
	}
	users := a.list("user")
	if a.has("me") {
		u, err := user.Current()
		if err != nil {
			return cli.Exit("squeue: "+err.Error(), exitFailure)
		}
		users = append(users, u.Username)
	}
	js, err := slurmJobs(c, a.list("jobs"))
	if err != nil {
		return err
	}
	states, names := a.list("states"), a.list("name")
	now := time.Now()
	if !a.has("noheader") {
		fmt.Fprintln(c.App.Writer, render(pieces, func(l byte) string { return squeueHeaders[l] }))
	}
	for _, j := range js {
		switch {
		case len(states) > 0 && !slurmStateMatches(j, states):
			continue
		case len(states) == 0 && !slurmLive(j) && !a.has("jobs"):
			continue
		case len(users) > 0 && !slices.Contains(users, j.Owner):
			continue
		case len(names) > 0 && !slices.Contains(names, j.Name):
			continue
		}
		fmt.Fprintln(c.App.Writer, render(pieces, func(l byte) string { v, _ := squeueField(j, l, now); return v }))
	}
	return nil
}

// slurmJobs fetches the jobs named (IDs or ARRAY_TASKs; an array's ID
// names all its tasks), or every job when none is named.
func slurmJobs(c *cli.Context, ids []string) ([]api.Job, error) {
	cl, err := newClient(c)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		js, err := cl.JobsWhere(c.Context, api.JobsQuery{})
		if err != nil {
			return nil, apiError(err)
		}
		return js, nil
	}
	all, err := cl.JobsWhere(c.Context, api.JobsQuery{})
	if err != nil {
		return nil, apiError(err)
	}
	var out []api.Job
	for _, id := range ids {
		ref, err := jobRef(id)
		if err != nil {
			return nil, cli.Exit("slurm_load_jobs error: Invalid job id specified: "+id, exitFailure)
		}
		n := len(out)
		for _, j := range all {
			if displayID(j) == ref || (!strings.Contains(ref, "_") && (fmt.Sprint(j.ID) == ref || fmt.Sprint(j.ArrayJobID) == ref)) {
				out = append(out, j)
			}
		}
		if len(out) == n {
			return nil, cli.Exit("slurm_load_jobs error: Invalid job id specified: "+id, exitFailure)
		}
	}
	slices.SortFunc(out, func(x, y api.Job) int { return cmp.Compare(x.ID, y.ID) })
	return slices.CompactFunc(out, func(x, y api.Job) bool { return x.ID == y.ID }), nil
}
