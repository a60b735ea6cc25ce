package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/shoal-hpc/shoal/agent/api"
)

// Result is what one CLI call printed and how it exited.
type Result struct {
	Stdout, Stderr string
	Code           int // exit code; -1 when it did not run or was killed
}

// ShoalCmd returns `shoal ARGS...` run on node, talking to node's own agent
// (SHOAL_ADDR, SHOAL_TOKEN_FILE set), in the caller's working directory.
func (l *Lab) ShoalCmd(ctx context.Context, node string, args ...string) *exec.Cmd {
	cmd := l.TB.Command(ctx, node, append([]string{l.opts.Shoal}, args...)...)
	ip, _ := l.TB.Node(node)
	cmd.Env = append(cmd.Env, fmt.Sprintf("SHOAL_ADDR=https://%s:%d", ip, HTTPPort), "SHOAL_TOKEN_FILE="+l.token)
	return cmd
}

// Exec runs `shoal ARGS...` on node and returns what it printed and its
// exit code. err is set only when the command could not run at all.
func (l *Lab) Exec(ctx context.Context, node string, args ...string) (Result, error) {
	cmd := l.ShoalCmd(ctx, node, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := Result{Stdout: so.String(), Stderr: se.String(), Code: -1}
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.Code = 0
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		return r, fmt.Errorf("on %s: shoal %s: %w", node, strings.Join(args, " "), err)
	}
	return r, nil
}

// Shoal runs `shoal ARGS...` on node and returns its stdout; a non-zero exit
// is an error carrying stderr.
func (l *Lab) Shoal(ctx context.Context, node string, args ...string) (string, error) {
	r, err := l.Exec(ctx, node, args...)
	if err != nil {
		return r.Stdout, err
	}
	if r.Code != 0 {
		return r.Stdout, fmt.Errorf("on %s: shoal %s: exit %d: %s", node, strings.Join(args, " "), r.Code, strings.TrimSpace(r.Stderr))
	}
	return r.Stdout, nil
}

// JSON runs `shoal ARGS... --json` on node and decodes its stdout into v.
func (l *Lab) JSON(ctx context.Context, node string, v any, args ...string) error {
	// Flags go before positional arguments (urfave/cli stops at the first).
	full := append([]string{args[0], "--json"}, args[1:]...)
	out, err := l.Shoal(ctx, node, full...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("on %s: shoal %s --json: decode: %w (output %q)", node, strings.Join(args, " "), err, truncate(out, 300))
	}
	return nil
}

// Members is `shoal members --json` as node sees it.
func (l *Lab) Members(ctx context.Context, node string) ([]api.Member, error) {
	var ms []api.Member
	return ms, l.JSON(ctx, node, &ms, "members")
}

// Leader is the leader's name as node sees it ("" with an error when there
// is none).
func (l *Lab) Leader(ctx context.Context, node string) (string, error) {
	var ld api.Leader
	if err := l.JSON(ctx, node, &ld, "leader"); err != nil {
		return "", err
	}
	return ld.Name, nil
}

// Net is `shoal net --json` as node sees it.
func (l *Lab) Net(ctx context.Context, node string) ([]api.NetPair, error) {
	var ps []api.NetPair
	return ps, l.JSON(ctx, node, &ps, "net")
}

// Job is `shoal job ID --json` as node sees it.
func (l *Lab) Job(ctx context.Context, node string, id uint64) (api.Job, error) {
	var j api.Job
	return j, l.JSON(ctx, node, &j, "job", fmt.Sprint(id))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
