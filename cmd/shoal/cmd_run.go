package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a job now from this node, streaming its output; exit with its exit code",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: `Shows progress on stderr (queued, placed on which nodes, degraded or not,
running), streams the job's stdout and stderr, and exits with the job's exit
code. Ctrl-C kills the job; a second Ctrl-C stops waiting at once.

Exit codes: the job's own; 1 when it failed without one (its nodes died more
than --max-attempts times, it could not start); 2 for bad flags; 3 when the
cluster has no leader; 137 when the job was killed.

Examples:
  shoal run -n 8 -- ./ring
  shoal run -n 4 --ppn 2 --policy paper -- ./halo 1000
  shoal run -n 4 --mpi none -- hostname
  shoal run -n 64 --immediate -- ./app        # fail now rather than queue`,
		Flags: jobFlags(),
		Action: func(c *cli.Context) error {
			cl, res, err := submit(c)
			if err != nil {
				return err
			}
			return follow(c, cl, res.ID, res.Index)
		},
	}
}

// agentGone is how long shoal run keeps asking an agent that does not
// answer before it gives up following the job.
const agentGone = 2 * time.Minute

// followWait is how long one blocking read of the CLI may wait for a
// change: short enough that an agent whose host vanished mid-wait is
// noticed within agentGone.
const followWait = time.Minute

// pollEvery is how often shoal run and shoal logs ask an agent that
// does not block (one older than blocking reads), or that failed to
// answer, about a job.
const pollEvery = 200 * time.Millisecond

// follow watches a job until it ends: progress on stderr, output streamed,
// exit with the job's code. The first read asks for a state that holds
// the submit (committed, its answer said, at index submitted): an agent
// the client moved to after the submit, whose copy is behind, waits for
// it rather than answering "no job". Each later read blocks on the agent
// until the replicated state moves past the index of the last answer, so
// a change is seen as soon as this agent applies it, not a poll later.
func follow(c *cli.Context, cl *api.Client, id, submitted uint64) error {
	stderr := c.App.ErrWriter
	fmt.Fprintf(stderr, "shoal: job %d submitted\n", id)
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	stopped := interruptKills(ctx, cancel, cl, id, stderr)
	var streams sync.WaitGroup
	streamed := map[int]bool{}
	said := map[string]bool{}
	last := ""
	var lost time.Time
	sentStdin := false
	var index uint64
	for {
		var j api.Job
		var next uint64
		var err error
		if index == 0 && submitted > 0 {
			j, next, err = cl.JobAt(ctx, id, submitted)
		} else {
			j, next, err = cl.JobAfter(ctx, id, index, followWait)
		}
		if stopped.Load() {
			return cli.Exit("", 130)
		}
		if err != nil {
			// A transient error (no leader yet on this node) is waited out;
			// an agent that stays unreachable is not.
			if lost.IsZero() {
				lost = time.Now()
			}
			if time.Since(lost) > agentGone {
				return cli.Exit(fmt.Sprintf("lost the agent for %v while following job %d (%v); the job may still run: see 'shoal job %d'", agentGone, id, err, id), exitFailure)
			}
			pause(ctx, pollEvery)
			continue
		}
		lost = time.Time{}
		if next == 0 {
			pause(ctx, pollEvery) // an agent that does not block: poll it
		}
		index = next
		for _, p := range milestones(j, said) {
			fmt.Fprintln(stderr, "shoal: "+safe(p))
		}
		if j.State == "queued" {
			if p := progress(j); p != last {
				fmt.Fprintln(stderr, "shoal: "+safe(p))
				last = p
			}
		}
		if n := startedAttempt(j); n > 0 && !streamed[n] {
			streamed[n] = true
			if !sentStdin && j.Spec.Stdin {
				// Rank 0 reads this command's standard input, once: input
				// read for an attempt that then failed is not sent again.
				sentStdin = true
				go func() {
					// A job that ended before reading its input (409) is no news.
					var se *api.StatusError
					if err := cl.SendStdin(ctx, id, n, stdinReader(c)); err != nil && ctx.Err() == nil && !(errors.As(err, &se) && se.Code == http.StatusConflict) {
						fmt.Fprintf(stderr, "shoal: standard input not sent: %v\n", err)
					}
				}()
			}
			for _, s := range []struct {
				name string
				w    io.Writer
			}{{"stdout", c.App.Writer}, {"stderr", stderr}} {
				streams.Add(1)
				go func() {
					defer streams.Done()
					streamLogs(ctx, cl, id, n, s.name, s.w)
				}()
			}
		}
		if terminal(j.State) {
			streams.Wait()
			fmt.Fprintln(stderr, "shoal: "+safe(progress(j)))
			return exitFor(j)
		}
	}
}

// interruptKills makes the first Ctrl-C (or SIGTERM) kill the job and the
// second stop waiting: it cancels ctx and the returned flag is set.
func interruptKills(ctx context.Context, cancel context.CancelFunc, cl *api.Client, id uint64, stderr io.Writer) *atomic.Bool {
	var stopped atomic.Bool
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		defer signal.Stop(sigs)
		killed := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-sigs:
			}
			if killed {
				fmt.Fprintf(stderr, "shoal: stopped waiting; job %d goes on being killed\n", id)
				stopped.Store(true)
				cancel()
				return
			}
			killed = true
			u, _ := user.Current()
			fmt.Fprintf(stderr, "shoal: killing job %d (Ctrl-C again to stop waiting)\n", id)
			if err := cl.Kill(ctx, id, u.Username); err != nil {
				fmt.Fprintf(stderr, "shoal: kill job %d: %v\n", id, err)
			}
		}
	}()
	return &stopped
}

// pause waits d, or less when ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// stdinHasInput reports whether shoal run's standard input may hold
// something for rank 0 (fileHasInput). A test's reader always may. (cli
// sets App.Reader to os.Stdin when nothing else was given.)
func stdinHasInput(c *cli.Context) bool {
	if f, ok := stdinReader(c).(*os.File); ok {
		return fileHasInput(f)
	}
	return true
}

// fileHasInput reports whether reading f may give bytes: not for the null
// device, an empty regular file or a closed descriptor; yes for a pipe, a
// terminal, a socket or a file with something in it.
func fileHasInput(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	switch {
	case fi.Mode().IsRegular():
		return fi.Size() > 0
	case fi.Mode()&os.ModeCharDevice != 0:
		null, err := os.Stat(os.DevNull)
		return err != nil || !os.SameFile(fi, null)
	}
	return true
}

// stdinReader is the standard input shoal run forwards: the app's reader
// (os.Stdin, or a test's).
func stdinReader(c *cli.Context) io.Reader {
	if c.App.Reader != nil {
		return c.App.Reader
	}
	return os.Stdin
}

func startedAttempt(j api.Job) int {
	for i := len(j.Attempts) - 1; i >= 0; i-- {
		if j.Attempts[i].StartedAt != nil {
			return j.Attempts[i].N
		}
	}
	return 0
}

func terminal(state string) bool { return state == "done" || state == "failed" || state == "killed" }

func hostsString(hs []api.JobHost) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s:%d", h.Node, h.Procs)
	}
	return strings.Join(parts, ",")
}

// milestones are the lines for what happened to each attempt since the
// last poll: placed (where, degraded or not), running, failed and why. They
// come from the job's record, so a job that raced through several states
// between two polls still tells its whole story, once.
func milestones(j api.Job, said map[string]bool) []string {
	var out []string
	say := func(key, line string) {
		if !said[key] {
			said[key] = true
			out = append(out, line)
		}
	}
	for _, a := range j.Attempts {
		placed := fmt.Sprintf("job %d placed on %s (attempt %d)", j.ID, hostsString(a.Hosts), a.N)
		if a.Degraded {
			placed += ", degraded: " + a.DegradedReason
		}
		say(fmt.Sprintf("placed/%d", a.N), placed)
		if a.StartedAt != nil {
			say(fmt.Sprintf("running/%d", a.N), fmt.Sprintf("job %d running (attempt %d)", j.ID, a.N))
		}
		if a.State == "failed" && a.Reason != "" {
			say(fmt.Sprintf("failed/%d", a.N), fmt.Sprintf("job %d attempt %d failed: %s", j.ID, a.N, a.Reason))
		}
	}
	return out
}

// progress is the one line that describes where a job is.
func progress(j api.Job) string {
	switch j.State {
	case "queued":
		s := fmt.Sprintf("job %d queued", j.ID)
		if j.Attempt > 0 {
			s = fmt.Sprintf("job %d requeued after attempt %d: %s", j.ID, j.Attempt, j.Attempts[len(j.Attempts)-1].Reason)
		}
		switch {
		case strings.HasPrefix(j.WaitReason, "waiting "): // "waiting for the network model: ..."
			s += " (" + j.WaitReason + ")"
		case j.WaitReason != "":
			s += " (waiting: " + j.WaitReason + ")"
		}
		return s
	case "placing", "launching":
		s := fmt.Sprintf("job %d placed on %s (attempt %d)", j.ID, hostsString(j.Hosts), j.Attempt)
		if j.Degraded {
			s += ", degraded: " + j.DegradedReason
		}
		return s + ", launching"
	case "running":
		s := fmt.Sprintf("job %d running on %s (attempt %d)", j.ID, hostsString(j.Hosts), j.Attempt)
		if j.Degraded {
			s += ", degraded"
		}
		return s
	case "done":
		return fmt.Sprintf("job %d done, exit code 0", j.ID)
	case "failed":
		if j.ExitCode != nil {
			return fmt.Sprintf("job %d failed, exit code %d", j.ID, *j.ExitCode)
		}
		return fmt.Sprintf("job %d failed: %s", j.ID, j.Reason)
	case "killed":
		return fmt.Sprintf("job %d killed", j.ID)
	}
	return fmt.Sprintf("job %d %s", j.ID, j.State)
}

func exitFor(j api.Job) error {
	switch {
	case j.State == "done":
		return nil
	case j.State == "killed":
		return cli.Exit("", 137)
	case j.ExitCode != nil:
		return cli.Exit("", *j.ExitCode)
	}
	return cli.Exit("", exitFailure)
}

// streamLogs copies one stream of one attempt as it is written, until the
// attempt ends. A failed request (the head node not reachable yet) is
// retried from where the last one stopped, until ctx ends.
func streamLogs(ctx context.Context, cl *api.Client, id uint64, attempt int, stream string, w io.Writer) {
	cw := &countingWriter{w: w}
	for ctx.Err() == nil {
		path := fmt.Sprintf("/v1/jobs/%d/logs?stream=%s&attempt=%d&follow=1&offset=%d", id, stream, attempt, cw.n)
		if err := cl.Stream(ctx, path, cw); err == nil {
			return // the attempt ended and everything was read
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// countingWriter remembers how much was written, so a retried stream
// resumes at the right offset.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
