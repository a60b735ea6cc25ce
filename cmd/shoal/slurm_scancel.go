package main

import (
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

var scancelOpts = []slurmOpt{
	{"user", 'u', true}, {"name", 'n', true}, {"state", 't', true}, {"me", 0, false},
	{"signal", 's', true}, {"batch", 'b', false}, {"full", 'f', false}, {"quiet", 'Q', false},
	{"verbose", 'v', false}, {"help", 'h', false}, {"usage", 0, false},
}

const scancelHelp = `scancel cancels jobs, as Slurm's scancel does: the jobs named (ID, ARRAY_TASK,
or an array's ID for all its tasks), or every job of yours that matches -u,
-n and -t. Only a job's owner (or root) may cancel it. Ending a job without
killing it (-s with a signal other than KILL, TERM or INT) is refused.

Options: -u/--user USER, --me, -n/--name NAME, -t/--state PENDING|RUNNING,
-Q/--quiet. -b, -f and -v are accepted.

Examples:
  scancel 12
  scancel 40_7
  scancel --me -t PENDING`

func scancel(c *cli.Context, args []string) error {
	a, err := parseSlurmArgs("scancel", args, scancelOpts)
	if err != nil {
		return cli.Exit(err.Error(), exitUsage)
	}
	if a.has("help") || a.has("usage") {
		writeHelp(c, scancelHelp)
		return nil
	}
	if s := a.last("signal"); s != "" && !slices.Contains([]string{"KILL", "SIGKILL", "9", "TERM", "SIGTERM", "15", "INT", "SIGINT", "2"}, s) {
		return cli.Exit(fmt.Sprintf("scancel: -s %s: shoal ends a job, it does not signal one; give -s KILL or TERM, or leave -s out", s), exitUsage)
	}
	me, err := user.Current()
	if err != nil {
		return cli.Exit("scancel: "+err.Error(), exitFailure)
	}
	users := a.list("user")
	if a.has("me") {
		users = append(users, me.Username)
	}
	states, names := a.list("state"), a.list("name")
	if len(a.operands) == 0 && len(users) == 0 && len(names) == 0 && len(states) == 0 {
		return cli.Exit("scancel: error: No job identification provided (give a job ID, or -u/--me, -n or -t)", exitUsage)
	}
	cl, err := newClient(c)
	if err != nil {
		return err
	}
	var targets []api.Job
	var whole []bool
	if len(a.operands) > 0 {
		for _, id := range a.operands {
			ref, err := jobRef(id)
			if err != nil {
				return cli.Exit("scancel: error: Invalid job id "+id, exitUsage)
			}
			j, err := cl.JobRef(c.Context, ref)
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "scancel: error: Kill job error on job id %s: Invalid job id specified\n", id)
				return cli.Exit("", exitFailure)
			}
			targets = append(targets, j)
			whole = append(whole, !strings.Contains(ref, "_") && j.ArrayJobID == j.ID && j.ArrayJobID != 0)
		}
	} else {
		js, err := cl.JobsWhere(c.Context, api.JobsQuery{})
		if err != nil {
			return apiError(err)
		}
		targets, whole = js, make([]bool, len(js))
	}
	failed := false
	for i, j := range targets {
		if !slurmLive(j) && !whole[i] {
			if len(a.operands) > 0 && !a.has("quiet") {
				fmt.Fprintf(c.App.ErrWriter, "scancel: error: Kill job error on job id %s: Job/step already completing or completed\n", displayID(j))
				failed = true
			}
			continue
		}
		switch {
		case len(users) > 0 && !slices.Contains(users, j.Owner):
			continue
		case len(names) > 0 && !slices.Contains(names, j.Name):
			continue
		case len(states) > 0 && !slurmStateMatches(j, states):
			continue
		}
		err := cl.KillWith(c.Context, j.ID, api.KillRequest{User: me.Username, Array: whole[i]})
		if err != nil {
			var se *api.StatusError
			msg := err.Error()
			if errors.As(err, &se) {
				msg = se.Msg
			}
			fmt.Fprintf(c.App.ErrWriter, "scancel: error: Kill job error on job id %s: %s\n", displayID(j), msg)
			failed = true
		}
	}
	if failed {
		return cli.Exit("", exitFailure)
	}
	return nil
}
