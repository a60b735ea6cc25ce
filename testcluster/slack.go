package testcluster

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// SlackEnv sets the factor by which WaitFor stretches every wait (a
// number, at least 1), overriding what the machine's load suggests: CI
// that runs the suite beside other work sets it.
const SlackEnv = "SHOAL_TEST_SLACK"

// maxSlack bounds the factor a loaded machine gives itself.
const maxSlack = 4

// Slack is how many times longer than on an idle machine a wait of a test
// may take here: SHOAL_TEST_SLACK when set; otherwise the 1-minute load
// average per CPU, between 1 and 4, doubled in a race-detector build
// (which runs agents several times slower). Waits are for conditions, so
// a longer bound costs time only when a test fails; a test of a time
// bound the product promises asserts it apart, not through WaitFor.
func Slack() float64 {
	if v, err := strconv.ParseFloat(os.Getenv(SlackEnv), 64); err == nil && v >= 1 {
		return v
	}
	f := 1.0
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			if l, err := strconv.ParseFloat(fs[0], 64); err == nil {
				f = min(max(l/float64(runtime.NumCPU()), 1), maxSlack)
			}
		}
	}
	if raceBuild {
		f *= 2
	}
	return f
}

// Stretch is d times Slack.
func Stretch(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Slack())
}
