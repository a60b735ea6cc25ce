package jobexec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// supervisedDir is a state directory inside a directory others may
// traverse, as a job could if it guessed the path: only the state
// directory's own mode keeps the job out.
func supervisedDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "supervisor")
	if err := PrepareStateDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSupervisorRecordsTheJobsEnd(t *testing.T) {
	t.Parallel()
	dir := supervisedDir(t)
	cmd, err := Command("", Spec{Dir: "/"}, []string{"sh", "-c", `echo out; echo err >&2; exit 7`})
	if err != nil {
		t.Fatal(err)
	}
	if err := Supervise(cmd, dir); err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("supervisor exited %d, want the job's 7", code)
	}
	if out.String() != "out\n" || errOut.String() != "err\n" {
		t.Errorf("job output %q / %q, want out / err", out.String(), errOut.String())
	}
	s, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Record == nil || s.Record.PID != cmd.Process.Pid {
		t.Errorf("record %+v, want the supervisor's pid %d", s.Record, cmd.Process.Pid)
	}
	if s.Alive {
		t.Error("a supervisor that was waited for is reported alive")
	}
	if s.Status == nil || s.Status.ExitCode != 7 || s.Status.Signal != 0 {
		t.Errorf("status %+v, want exit code 7", s.Status)
	}
}

func TestSupervisorRecordsASignal(t *testing.T) {
	t.Parallel()
	dir := supervisedDir(t)
	cmd, err := Command("", Spec{Dir: "/"}, []string{"sh", "-c", `kill -9 $$`})
	if err != nil {
		t.Fatal(err)
	}
	if err := Supervise(cmd, dir); err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status == nil || s.Status.ExitCode != 137 || s.Status.Signal != 9 {
		t.Errorf("status %+v, want killed by signal 9 (exit code 137)", s.Status)
	}
}

// The job's helper still says why a job cannot start, through the
// supervisor.
func TestSupervisedSetupErrorReachesTheAgent(t *testing.T) {
	t.Parallel()
	dir := supervisedDir(t)
	cmd, err := Command("", Spec{Dir: "/nonexistent/wd"}, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Supervise(cmd, dir); err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	err = Start(cmd)
	if se, ok := err.(*SetupError); !ok || !strings.Contains(se.Reason, "working directory /nonexistent/wd") {
		t.Fatalf("Start = %v, want the helper's setup error", err)
	}
}

// A job of another user cannot write its own end: it can neither create,
// rename nor link a file in its supervisor's state directory, and a file
// planted there by anyone but the agent's user, or a link, is refused.
func TestJobCannotForgeItsStatus(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	dir := supervisedDir(t)
	fake := filepath.Join(t.TempDir(), "fake.json")
	script := `d=` + dir + `
echo '{"exit_code":0}' > /tmp/shoal-forged-$$.json 2>/dev/null
echo '{"exit_code":0}' > "$d/status.json" 2>/dev/null && echo wrote
mv /tmp/shoal-forged-$$.json "$d/status.json" 2>/dev/null && echo renamed
ln -s /tmp/shoal-forged-$$.json "$d/status.json" 2>/dev/null && echo linked
rm -f /tmp/shoal-forged-$$.json
exit 3`
	cmd, err := Command("", Spec{Cred: c, Dir: "/"}, []string{"sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	if err := Supervise(cmd, dir); err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if out.Len() != 0 {
		t.Errorf("a job of nobody's reached its state directory: %q", out.String())
	}
	s, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status == nil || s.Status.ExitCode != 3 {
		t.Errorf("status %+v, want the job's real exit code 3", s.Status)
	}

	// Planted by root for the test, as a flaw elsewhere might let one in.
	if err := os.WriteFile(fake, []byte(`{"exit_code":0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(dir, statusFile)
	if err := os.Remove(st); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fake, st); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(dir); err == nil {
		t.Error("a status file that is a link was read")
	}
	if err := os.Remove(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st, []byte(`{"exit_code":0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(st, int(c.UID), int(c.GID)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(dir); err == nil {
		t.Error("a status file of nobody's was read")
	}
}

func TestAliveTellsAReusedPid(t *testing.T) {
	t.Parallel()
	start, err := procStartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(Record{PID: os.Getpid(), Start: start}) {
		t.Error("this process is not alive")
	}
	if Alive(Record{PID: os.Getpid(), Start: start + 1}) {
		t.Error("a process with another start time was taken for the record's")
	}
}
