package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
	"golang.org/x/sys/unix"
)

// openPty returns the two ends of a new pseudo-terminal.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestJobCannotReachTheAgentsTerminal starts an agent the way an
// administrator does from a shell: with a terminal as its controlling tty.
// A job of nobody's must not be able to open /dev/tty (from where TIOCSTI
// would type commands into root's shell): it is in a session of its own.
func TestJobCannotReachTheAgentsTerminal(t *testing.T) {
	t.Parallel()
	nobody := needNobody(t)
	uid, gid := ids(nobody)
	_, slave := openPty(t)
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(testcluster.NewToken(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "shoal.sock")
	logf, err := os.Create(filepath.Join(dir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(testcluster.BuildShoal(t), "agent", "--name", "tty0", "--bind", "127.0.0.1",
		"--gossip-port", "0", "--raft-port", "0", "--http-port", "0", "--bootstrap-expect", "1",
		"--data-dir", filepath.Join(dir, "data"), "--token-file", tok, "--socket", sock, "--log-level", "warn")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	// The precondition of the attack: the agent has a controlling terminal.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) < 5 || f[4] == "0" {
		t.Fatalf("the agent has no controlling terminal: %s", stat)
	}

	work := mkdirOwned(t, filepath.Join(sharedDir(t), "work"), 0o755, uid, gid)
	c := api.NewClient(api.SocketScheme+sock, "")
	ctx := context.Background()
	var id uint64
	testcluster.WaitFor(t, 30*time.Second, "the agent to accept a job", func() bool {
		res, err := c.Submit(ctx, api.SubmitRequest{RequestID: "tty", Owner: nobody.Username, Spec: api.JobSpec{
			Cmd: []string{"sh", "-c", `if (: </dev/tty) 2>/dev/null; then echo open; else echo none; fi > result`},
			NP:  1, MPI: "none", Workdir: work, MaxAttempts: 1, Oversubscribe: true, Force: true}})
		id = res.ID
		return err == nil
	}, func() string { b, _ := os.ReadFile(logf.Name()); return string(b) })
	var j api.Job
	testcluster.WaitFor(t, 30*time.Second, "the job to end", func() bool {
		j, _ = c.Job(ctx, id)
		return j.State == "done" || j.State == "failed" || j.State == "killed"
	}, func() string { return describe(j) })
	if j.State != "done" {
		t.Fatalf("%s", describe(j))
	}
	b, err := os.ReadFile(filepath.Join(work, "result"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "none" {
		t.Fatalf("a job of nobody's opened /dev/tty, the agent's terminal (%q)", got)
	}
}
