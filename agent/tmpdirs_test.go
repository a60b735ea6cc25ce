package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestKilledHeadLeavesNoAttemptDirs: an agent killed with SIGKILL while it
// heads an attempt cannot remove the attempt's directory in the temporary
// directory (its launcher's remote shell, hostfile, step socket) nor its
// directory of capability files; its next life removes them at start, and
// leaves alone what another agent sharing the temporary directory made.
func TestKilledHeadLeavesNoAttemptDirs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent runs root's job")
	}
	base := t.TempDir()
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	// Another agent's attempt and capability directories.
	other := filepath.Join(tmp, "shoal-job7.1-0123456789ab-42")
	otherCaps := filepath.Join(tmp, "shoal-caps-0123456789ab-43")
	for _, d := range []string{other, otherCaps} {
		if err := os.Mkdir(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := agent.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(base, "token")
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	args := []string{"agent", "--name", "solo", "--bind", "127.0.0.1",
		"--gossip-port", strconv.Itoa(ports[0]), "--raft-port", strconv.Itoa(ports[1]), "--http-port", strconv.Itoa(ports[2]),
		"--probe-port", "0", "--data-dir", filepath.Join(base, "data"), "--token-file", tokFile, "--bootstrap-expect", "1",
		"--placement-model-wait", "0"}
	var logs lockedLog
	start := func() *exec.Cmd {
		cmd := exec.Command(testcluster.BuildShoal(t), args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "TMPDIR=" + tmp}
		cmd.Stdout, cmd.Stderr = &logs, &logs
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	cl := api.NewTLSClient("https://127.0.0.1:"+strconv.Itoa(ports[2]), tok, testcluster.ClientTLS(tok))
	ctx := context.Background()
	lead := func() {
		testcluster.WaitFor(t, 30*time.Second, "the agent to lead", func() bool {
			_, err := cl.Leader(ctx)
			return err == nil
		})
	}
	cmd := start()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agent log:\n%s", logs.String())
		}
	})
	lead()
	res, err := cl.Submit(ctx, api.SubmitRequest{RequestID: t.Name(), Owner: "root",
		// Two copies: a single copy would run under a supervisor, survive
		// the kill and be adopted, its directories rightly kept.
		Spec: api.JobSpec{Cmd: []string{"sleep", "300"}, NP: 2, MPI: "none", Workdir: "/", Oversubscribe: true, Force: true, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(tmp, fmt.Sprintf("shoal-job%d.*", res.ID))
	// The attempt's directory, and the directory of its processes'
	// capability files beside the other agent's: the agent makes the second
	// when the attempt's first process starts, after the first.
	var dirs, caps []string
	testcluster.WaitFor(t, 30*time.Second, "the attempt's directory and its capability directory in "+tmp, func() bool {
		dirs, _ = filepath.Glob(pattern)
		caps, _ = filepath.Glob(filepath.Join(tmp, "shoal-caps-*"))
		caps = slices.DeleteFunc(caps, func(d string) bool { return d == otherCaps })
		return len(dirs) == 1 && len(caps) == 1
	}, func() string {
		j, err := cl.Job(ctx, res.ID)
		return fmt.Sprintf("attempt dirs %v capability dirs %v job %+v %v\n%s", dirs, caps, j, err, logs.String())
	})
	dirs = append(dirs, caps[0])
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("the killed agent's directory %s is gone before the restart: %v", d, err)
		}
	}
	cmd = start()
	lead()
	testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("the killed agent's directories %v gone", dirs), func() bool {
		for _, d := range dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				return false
			}
		}
		return true
	})
	for _, d := range []string{other, otherCaps} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("another agent's directory went too: %v", err)
		}
	}
}

// lockedLog collects an agent process's log while the test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
