package spawn

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestChildOutlivesTheThreadThatAskedForIt starts a child with Pdeathsig
// from a goroutine whose thread then exits, as the agent's output writers'
// threads do, and checks the child was not killed with it: the signal it
// then receives is the test's SIGTERM, not a parent-death SIGKILL.
func TestChildOutlivesTheThreadThatAskedForIt(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The runtime never ends the main thread (it parks it instead), so the
	// asking goroutine retries until it runs on another one.
	var tid int
	for tid == 0 {
		asked := make(chan int, 1)
		errs := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			if unix.Gettid() == os.Getpid() {
				asked <- 0
				return
			}
			asked <- unix.Gettid()
			errs <- Start(cmd)
		}()
		if tid = <-asked; tid != 0 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	task := "/proc/self/task/" + strconv.Itoa(tid)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
			break // the asking thread is gone; a parent-death signal would have been sent by now
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("thread %d never exited", tid)
		}
		runtime.Gosched()
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal the child: %v", err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child wait: %v", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v, want SIGTERM (SIGKILL: its parent-death signal fired when a thread exited)", ws)
	}
}
