package jobexec

import (
	"errors"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper starts a process that runs until killed and returns its record.
func sleeper(t *testing.T) (*exec.Cmd, Record) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	start, err := procStartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, Record{PID: cmd.Process.Pid, Start: start}
}

// noPidfd is the pidfd opener of a kernel before Linux 5.3, or of a
// container whose seccomp filter refuses pidfd_open.
func noPidfd(int, int) (int, error) { return -1, unix.ENOSYS }

func TestWaitExitWithoutPidfdWaitsForTheSupervisor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		open func(int, int) (int, error)
	}{{"pidfd", unix.PidfdOpen}, {"no pidfd", noPidfd}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd, r := sleeper(t)
			done := make(chan error, 1)
			go func() { done <- waitExit(r, nil, tc.open) }()
			// Several of its polls: long enough for a watch that gives up
			// to have returned.
			select {
			case err := <-done:
				t.Fatalf("WaitExit returned while the process runs: %v", err)
			case <-time.After(5 * alivePoll):
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("WaitExit after the process ended: %v", err)
			}
		})
	}
}

func TestWaitExitStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		open func(int, int) (int, error)
	}{{"pidfd", unix.PidfdOpen}, {"no pidfd", noPidfd}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, r := sleeper(t)
			cancel := make(chan struct{})
			close(cancel)
			if err := waitExit(r, cancel, tc.open); !errors.Is(err, ErrStopped) {
				t.Fatalf("WaitExit cancelled = %v, want ErrStopped", err)
			}
		})
	}
}

func TestWaitExitOfAnEndedProcess(t *testing.T) {
	t.Parallel()
	cmd, r := sleeper(t)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, open := range []func(int, int) (int, error){unix.PidfdOpen, noPidfd} {
		if err := waitExit(r, nil, open); err != nil {
			t.Fatalf("WaitExit of an ended process: %v", err)
		}
	}
}
