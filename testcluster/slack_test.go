package testcluster

import (
	"testing"
	"time"
)

func TestSlack(t *testing.T) {
	t.Setenv(SlackEnv, "3")
	if got := Slack(); got != 3 {
		t.Fatalf("Slack with %s=3: %v", SlackEnv, got)
	}
	if got := Stretch(10 * time.Second); got != 30*time.Second {
		t.Fatalf("Stretch(10s) with slack 3: %v", got)
	}
	for _, v := range []string{"0.5", "fast", ""} {
		t.Setenv(SlackEnv, v)
		if got := Slack(); got < 1 || got > 2*maxSlack {
			t.Errorf("Slack with %s=%q: %v, want the load's, in [1, %d]", SlackEnv, v, got, 2*maxSlack)
		}
	}
}

// A wait stretched by the slack still ends at its condition, not at its
// bound.
func TestWaitForEndsAtItsCondition(t *testing.T) {
	t.Setenv(SlackEnv, "4")
	start := time.Now()
	WaitFor(t, time.Minute, "a condition that holds", func() bool { return true })
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("WaitFor took %v for a condition that held at once", took)
	}
}
