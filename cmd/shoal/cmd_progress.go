package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/injob"
)

func progressCommand() *cli.Command {
	return &cli.Command{
		Name:  "progress",
		Usage: "from inside a job: report the iteration the program reached (elastic jobs)",
		Description: `Reports to the local agent (its socket SHOAL_AGENT_SOCK, or SHOAL_AGENT_ADDR without one,
authorised by the attempt's capability in the file SHOAL_JOB_CAP_FILE, all set by shoal in every job process). Elastic jobs need it: the decision layer resizes a job from its
rate of iterations, and a job that never reports runs as a fixed-size job. Reports are cheap;
the agent commits at most one a second to raft.

Prints "checkpoint" when shoal asks the job to resize (as SIGUSR1 does): write the state under
$SHOAL_CHECKPOINT_DIR at the next iteration boundary and exit 75.

The same as an HTTP call, the header read from standard input so that the capability is
not on curl's command line, which every user sees in ps:
  printf 'Authorization: Job %s\n' "$(cat "$SHOAL_JOB_CAP_FILE")" |
    curl -s --cacert "$SHOAL_CA_FILE" -X POST -H @- \
         -d '{"iter": 120, "comm": 0.1}' "$SHOAL_AGENT_ADDR/v1/jobs/$SHOAL_JOB_ID/progress"

Examples:
  shoal progress --iter 120
  shoal progress --iter 120 --comm 0.25
  [ "$(shoal progress --iter $i)" = checkpoint ] && { save_state; exit 75; }`,
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "iter", Usage: "iterations completed, `K` (required)"},
			&cli.Float64Flag{Name: "comm", Value: -1, Usage: "share of an iteration spent communicating, `F` in [0,1]"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "progress takes no arguments")
			}
			if !c.IsSet("iter") || c.Int64("iter") < 0 {
				return usagef(c, "give --iter K, the iterations completed (K >= 0)")
			}
			capab, err := injob.Capability()
			var jc *api.Client
			if err == nil {
				jc, err = injob.Agent()
			}
			if errors.Is(err, injob.ErrNotInJob) {
				return cli.Exit("progress: runs only inside a shoal job (SHOAL_JOB_CAP_FILE and SHOAL_AGENT_SOCK or SHOAL_AGENT_ADDR are not set)", exitUsage)
			}
			if err != nil {
				return cli.Exit("progress: "+err.Error(), exitUsage)
			}
			id, err := strconv.ParseUint(strings.SplitN(capab, ".", 2)[0], 10, 64)
			if err != nil {
				return cli.Exit("progress: the job capability is malformed", exitUsage)
			}
			req := api.ProgressRequest{Iter: c.Int64("iter")}
			if f := c.Float64("comm"); f != -1 {
				if f < 0 || f > 1 {
					return usagef(c, "--comm %v must be within [0,1]", f)
				}
				req.Comm = &f
			}
			ctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
			defer cancel()
			res, err := jc.Progress(ctx, "Job "+capab, id, req)
			if err != nil {
				return apiError(err)
			}
			if res.Checkpoint {
				fmt.Fprintln(c.App.Writer, "checkpoint")
			}
			return nil
		},
	}
}
