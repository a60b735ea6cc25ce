package netns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scenarioEnv selects what TestTeardownHelper does when the teardown tests
// run the test binary as a subprocess.
const scenarioEnv = "SHOAL_NETNS_TEARDOWN_SCENARIO"

// prefixLine is what the helper prints so the parent learns the prefix.
const prefixLine = "NETNS_PREFIX="

// scratchLine names the directory the "signal" scenario hands to AtSignal.
const scratchLine = "NETNS_SCRATCH="

// startLitter starts every kind of process Close must clean up: a tracked
// one, a tracked one that ignores SIGTERM, an untracked Command never
// waited for, and a daemon that left its process group by setsid. None is
// tied to the test's context, so only the teardown can stop them.
func startLitter(t *testing.T, tb *Testbed) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	for _, argv := range [][]string{
		{"sleep", "300"},
		{"sh", "-c", "trap '' TERM; sleep 300 & wait"},
	} {
		if _, err := tb.Start(ctx, "a", argv, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.Command(ctx, "b", "sleep", "300").Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Run(ctx, "b", "sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 &"); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t.Context(), 10*time.Second, "litter running", func(ctx2 context.Context) (bool, error) {
		pids, err := strayPids(ctx2, tb.Prefix(), nil)
		return len(pids) >= 5, err // sleep, sh + sleep, sleep, setsid'd sleep
	}); err != nil {
		t.Fatal(err)
	}
}

func assertNoLeftovers(t *testing.T, prefix string) {
	t.Helper()
	r, err := Leftovers(prefix)
	if err != nil {
		t.Fatalf("leftovers of %s: %v", prefix, err)
	}
	if !r.Empty() {
		t.Fatalf("leftovers of %s: %v", prefix, r)
	}
}

func TestTeardown_CloseLeavesNothing(t *testing.T) {
	SkipIfUnavailable(t)
	tb, err := Up(t.Context(), twoNodes(0), Options{StopGrace: 300 * time.Millisecond, Logger: UpForTestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	startLitter(t, tb)
	if r, _ := Leftovers(tb.Prefix()); len(r.Namespaces) != 3 || len(r.Processes) < 5 {
		t.Fatalf("before Close: %v; want 3 namespaces and the litter", r)
	}
	dir := tb.Dir()
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoLeftovers(t, tb.Prefix())
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("log dir %s still there: %v", dir, err)
	}
	if err := tb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := tb.Start(t.Context(), "a", []string{"true"}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
}

// TestTeardownHelper is the body the subprocess scenarios run; it does
// nothing in a normal test run.
func TestTeardownHelper(t *testing.T) {
	scenario := os.Getenv(scenarioEnv)
	if scenario == "" {
		t.Skip("helper for the teardown tests")
	}
	tb := UpForTest(t, twoNodes(0), Options{StopGrace: 300 * time.Millisecond})
	startLitter(t, tb)
	if scenario == "signal" {
		scratch, err := os.MkdirTemp("", "netns-scratch-")
		if err != nil {
			t.Fatal(err)
		}
		AtSignal(func() { _ = os.RemoveAll(scratch) })
		fmt.Println(scratchLine + scratch)
	}
	fmt.Println(prefixLine + tb.Prefix())
	switch scenario {
	case "fail":
		t.Fatal("deliberate failure: the testbed must still be torn down")
	default: // "signal", "kill": wait to be signalled
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
}

// runScenario runs TestTeardownHelper in a subprocess and returns the
// testbed prefix it printed and the subprocess (still running unless the
// scenario ends by itself).
func runScenario(t *testing.T, scenario string) (string, *exec.Cmd, *bufio.Scanner) {
	p, _, cmd, sc := runScenarioScratch(t, scenario)
	return p, cmd, sc
}

// runScenarioScratch is runScenario that also returns the scratch
// directory the helper printed before its prefix ("" if none).
func runScenarioScratch(t *testing.T, scenario string) (string, string, *exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTeardownHelper$", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), scenarioEnv+"="+scenario)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	scratch := ""
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), scratchLine); ok {
			scratch = d
		}
		if p, ok := strings.CutPrefix(sc.Text(), prefixLine); ok {
			return p, scratch, cmd, sc
		}
	}
	t.Fatalf("scenario %s: no %s line (err %v)", scenario, prefixLine, sc.Err())
	return "", "", nil, nil
}

// drain reads the rest of the subprocess's stdout, which Wait needs.
func drain(t *testing.T, sc *bufio.Scanner) string {
	var b strings.Builder
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

func TestTeardown_AfterFailingTest(t *testing.T) {
	SkipIfUnavailable(t)
	prefix, cmd, sc := runScenario(t, "fail")
	out := drain(t, sc)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("failing helper: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(out, "deliberate failure") {
		t.Errorf("helper did not fail where expected:\n%s", out)
	}
	assertNoLeftovers(t, prefix)
}

// TestTeardown_OnSIGTERM: SIGTERM tears the testbed down, runs what was
// given to AtSignal (the helper's scratch directory goes) and the process
// dies by the signal.
func TestTeardown_OnSIGTERM(t *testing.T) {
	SkipIfUnavailable(t)
	prefix, scratch, cmd, sc := runScenarioScratch(t, "signal")
	if scratch == "" {
		t.Fatal("the signal scenario printed no scratch directory")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	out := drain(t, sc)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("helper after SIGTERM: %v, want death by SIGTERM\n%s", err, out)
	}
	assertNoLeftovers(t, prefix)
	if _, err := os.Stat(scratch); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("AtSignal's scratch directory %s still there after SIGTERM: %v", scratch, err)
	}
}

func TestTeardown_SweepAfterSIGKILL(t *testing.T) {
	SkipIfUnavailable(t)
	prefix, cmd, sc := runScenario(t, "kill")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	drain(t, sc)
	_ = cmd.Wait()
	// Nothing could clean up: the leftovers are there until swept (unless a
	// concurrent Up elsewhere swept them as stale already).
	r, err := Leftovers(prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after SIGKILL: %v", r)
	if err := SweepStale(t.Context(), UpForTestLogger(t)); err != nil {
		t.Fatal(err)
	}
	assertNoLeftovers(t, prefix)
}
