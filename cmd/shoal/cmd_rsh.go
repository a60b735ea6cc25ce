package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

// sshOptsWithArg are ssh's options that take an argument; rsh skips them
// (and the ones without) the way ssh would parse them.
const sshOptsWithArg = "BbcDEeFIiJLlmOoPpQRSWw"

func rshCommand() *cli.Command {
	return &cli.Command{
		Name:      "rsh",
		Usage:     "remote launcher for MPI: run CMD on HOST within the current job",
		ArgsUsage: "[-x] [ssh options] HOST CMD...",
		Description: `shoal rsh is what MPI launchers call instead of ssh, so no ssh daemon is
needed. It runs only inside a shoal job (the agent names the attempt's
capability file in SHOAL_JOB_CAP_FILE)
and only on nodes the job holds. It streams CMD's output and exits with its
status; when rsh goes away, CMD's whole process tree is killed.

  MPICH:    mpiexec -launcher ssh -launcher-exec "shoal rsh" -hosts n1:4,n2:4 -n 8 ./app
  Open MPI: mpirun --mca plm_rsh_agent "shoal rsh" --host n1:4,n2:4 -np 8 ./app

shoal run does this for you.

Examples (inside a job):
  shoal rsh n2 hostname
  shoal rsh -x n2 env`,
		SkipFlagParsing: true,
		Action:          runRsh,
	}
}

// parseRsh splits ssh-style arguments into the host and the remote command.
func parseRsh(args []string) (host string, cmd []string, err error) {
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		i++
		for j := 1; j < len(a); j++ {
			if strings.IndexByte(sshOptsWithArg, a[j]) >= 0 {
				if j == len(a)-1 {
					if i >= len(args) {
						return "", nil, fmt.Errorf("option -%c needs an argument", a[j])
					}
					i++
				}
				break
			}
		}
	}
	if i >= len(args) {
		return "", nil, fmt.Errorf("no host given")
	}
	host, cmd = args[i], args[i+1:]
	if len(cmd) == 0 {
		return "", nil, fmt.Errorf("no command for %s: shoal rsh runs commands, not shells", host)
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:] // user@host: the job's owner is who runs it anyway
	}
	return host, cmd, nil
}

func runRsh(c *cli.Context) error {
	var jc *api.Client
	host, cmd, err := parseRsh(c.Args().Slice())
	if err != nil {
		return cli.Exit("rsh: "+err.Error()+" (usage: shoal rsh [-x] HOST CMD...)", exitUsage)
	}
	capab, err := jobCapability()
	if err == nil {
		jc, err = jobAgent()
	}
	if errors.Is(err, errNotInJob) {
		return cli.Exit("rsh: runs only inside a shoal job (SHOAL_JOB_CAP_FILE and SHOAL_AGENT_SOCK or SHOAL_AGENT_ADDR are not set); use 'shoal run'", exitUsage)
	}
	if err != nil {
		return cli.Exit("rsh: "+err.Error(), exitUsage)
	}
	parts := strings.SplitN(capab, ".", 3)
	id, err1 := strconv.ParseUint(parts[0], 10, 64)
	att, err2 := strconv.Atoi(parts[min(1, len(parts)-1)])
	if len(parts) != 3 || err1 != nil || err2 != nil {
		return cli.Exit("rsh: the job capability is malformed", exitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// ssh joins the remote command into one string for the remote shell;
	// so do we, so that launchers quoting for ssh work unchanged.
	req := api.ExecRequest{Job: id, Attempt: att, Node: host, Shell: strings.Join(cmd, " ")}
	code, err := jc.ExecAuth(ctx, "Job "+capab, req, c.App.Writer, c.App.ErrWriter)
	if err != nil {
		// ssh's own failures exit 255; launchers read that as "could not launch".
		return cli.Exit("rsh: "+host+": "+err.Error(), 255)
	}
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
}
