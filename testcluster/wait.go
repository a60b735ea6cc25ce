package testcluster

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds or timeout passes, then fails the test
// naming what it waited for. explain, when given, adds the state at the
// deadline to the failure message.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		msg := ""
		for _, f := range explain {
			msg += "; " + f()
		}
		t.Fatalf("timed out after %v waiting for %s%s", timeout, what, msg)
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
