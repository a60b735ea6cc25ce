package injob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/agent/api"
)

// Exit statuses of Rsh besides the remote command's own.
const (
	// ExitUsage: bad arguments, or not inside a job; nothing was attempted.
	ExitUsage = 2
	// ExitUnreachable is ssh's status for its own failures, which MPI
	// launchers read as "could not launch".
	ExitUnreachable = 255
)

// sshOptsWithArg are ssh's options that take an argument; rsh skips them
// (and the ones without) the way ssh would parse them.
const sshOptsWithArg = "BbcDEeFIiJLlmOoPpQRSWw"

// ParseRsh splits ssh-style arguments into the host and the remote command.
func ParseRsh(args []string) (host string, cmd []string, err error) {
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

// Rsh is `shoal rsh ARGS`: it runs the command on the host within the
// current job, streams its output to stdout and stderr, and returns its
// exit status. When the failure is rsh's own, msg says why in one line
// (the caller prints it, made safe for a terminal).
func Rsh(ctx context.Context, args []string, stdout, stderr io.Writer) (code int, msg string) {
	host, cmd, err := ParseRsh(args)
	if err != nil {
		return ExitUsage, "rsh: " + err.Error() + " (usage: shoal rsh [-x] HOST CMD...)"
	}
	var jc *api.Client
	capab, err := Capability()
	if err == nil {
		jc, err = Agent()
	}
	if errors.Is(err, ErrNotInJob) {
		return ExitUsage, "rsh: runs only inside a shoal job (SHOAL_JOB_CAP_FILE and SHOAL_AGENT_SOCK or SHOAL_AGENT_ADDR are not set); use 'shoal run'"
	}
	if err != nil {
		return ExitUsage, "rsh: " + err.Error()
	}
	parts := strings.SplitN(capab, ".", 3)
	id, err1 := strconv.ParseUint(parts[0], 10, 64)
	att, err2 := strconv.Atoi(parts[min(1, len(parts)-1)])
	if len(parts) != 3 || err1 != nil || err2 != nil {
		return ExitUsage, "rsh: the job capability is malformed"
	}
	// ssh joins the remote command into one string for the remote shell;
	// so do we, so that launchers quoting for ssh work unchanged.
	req := api.ExecRequest{Job: id, Attempt: att, Node: host, Shell: strings.Join(cmd, " ")}
	code, err = jc.ExecAuth(ctx, "Job "+capab, req, stdout, stderr)
	if err != nil {
		return ExitUnreachable, "rsh: " + host + ": " + err.Error()
	}
	return code, ""
}
