package testcluster

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
)

// TestStopAgentsInFindsAgentsByDataDir: demo-stop must stop an agent that
// someone started by hand on one of the demo's data dirs (relative to
// its own working directory, with a PID recorded nowhere), and leave an
// agent of another directory running.
func TestStopAgentsInFindsAgentsByDataDir(t *testing.T) {
	bin := BuildShoal(t)
	demo, other := t.TempDir(), t.TempDir()
	tok, err := agent.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	start := func(cwd, dataDir string) *exec.Cmd {
		t.Helper()
		if err := writeToken(filepath.Join(cwd, "token"), tok); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "agent", "--name", "x", "--bind", "127.0.0.1", "--gossip-port", "0", "--raft-port", "0",
			"--http-port", "0", "--probe-port", "0", "--data-dir", dataDir, "--token-file", "token", "--bootstrap-expect", "1",
			"--log-level", "error")
		cmd.Dir = cwd
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	mine := start(demo, "node2") // relative: resolved through the process's cwd
	theirs := start(other, filepath.Join(other, "node1"))
	exited := make(chan struct{})
	go func() { _ = mine.Wait(); close(exited) }()
	t.Cleanup(func() { _ = mine.Process.Kill(); <-exited; _ = theirs.Process.Kill(); _ = theirs.Wait() })

	pids, err := AgentsIn(demo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pids, []int{mine.Process.Pid}) {
		t.Fatalf("AgentsIn(%s) = %v, want only the agent on its node2, %d (the other is %d)", demo, pids, mine.Process.Pid, theirs.Process.Pid)
	}
	n, err := StopAgentsIn(demo, 10*time.Second)
	if err != nil || n != 1 {
		t.Fatalf("StopAgentsIn = %d, %v; want 1 stopped", n, err)
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatal("the demo's agent still runs after StopAgentsIn")
	}
	if pids, _ := AgentsIn(other); !slices.Equal(pids, []int{theirs.Process.Pid}) {
		t.Fatalf("AgentsIn(%s) = %v after stopping the demo's, want the other agent %d still running", other, pids, theirs.Process.Pid)
	}
}
