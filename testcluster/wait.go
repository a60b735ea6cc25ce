package testcluster

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// WaitFor polls cond until it holds or timeout, stretched by Slack on a
// loaded machine, passes, then fails the test naming what it waited for.
// explain, when given, adds the state at the deadline to the failure
// message.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	slack := Slack()
	stretched := time.Duration(float64(timeout) * slack)
	if err := Poll(stretched, cond); err != nil {
		msg := ""
		for _, f := range explain {
			msg += "; " + f()
		}
		t.Fatalf("timed out after %v (%v × slack %.1f) waiting for %s%s", stretched.Round(time.Millisecond), timeout, slack, what, msg)
	}
}

// Poll is WaitFor without a test: it returns an error at the deadline.
func Poll(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return errTimeout
		}
		time.Sleep(pollEvery) // the polling period of a condition, not a synchronisation
	}
	return nil
}

const pollEvery = 25 * time.Millisecond

type timeoutErr struct{}

func (timeoutErr) Error() string { return "condition not met before the deadline" }

var errTimeout error = timeoutErr{}

// AttemptLines returns the lines of a runs file that the ranks of one
// attempt appended, each "job,attempt,pid": the restart tests' record of
// which attempts started, and how often.
func AttemptLines(runs string, job uint64, attempt int) []string {
	b, _ := os.ReadFile(runs)
	var out []string
	prefix := fmt.Sprintf("%d,%d,", job, attempt)
	for _, l := range strings.Fields(string(b)) {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}
