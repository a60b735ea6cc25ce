package jobexec

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// helperPipes are a supervisor's status and environment pipes; read gives
// what the supervisor said on the status pipe, once it closed it.
func helperPipes(t *testing.T) (status, env *os.File, read func() string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); er.Close() })
	return w, ew, func() string {
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// A helper the supervisor cannot start is a setup failure the agent is
// told of on the status pipe, not an exit of the job's.
func TestSupervisorSaysWhyTheHelperDidNotStart(t *testing.T) {
	t.Parallel()
	dir := supervisedDir(t)
	status, env, read := helperPipes(t)
	refuse := func(*exec.Cmd) error { return errors.New("clone3: resource temporarily unavailable") }
	if code := runHelper(dir, exec.Command("true"), status, env, refuse); code != exitSetup {
		t.Errorf("exit status %d, want %d", code, exitSetup)
	}
	if msg := read(); !strings.Contains(msg, "start the job helper: clone3: resource temporarily unavailable") {
		t.Errorf("status pipe says %q, want why the helper did not start", msg)
	}
}

// A helper that cannot be waited for leaves its end unknown: no status is
// recorded, and the supervisor does not crash.
func TestSupervisorWithoutTheHelpersEnd(t *testing.T) {
	t.Parallel()
	dir := supervisedDir(t)
	status, env, read := helperPipes(t)
	notStarted := func(*exec.Cmd) error { return nil } // Wait then fails: nothing to wait for
	if code := runHelper(dir, exec.Command("true"), status, env, notStarted); code != exitSetup {
		t.Errorf("exit status %d, want %d", code, exitSetup)
	}
	if msg := read(); msg != "" {
		t.Errorf("status pipe says %q after a start that succeeded", msg)
	}
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != nil {
		t.Errorf("status %+v recorded for a job whose end is unknown", *st.Status)
	}
}
