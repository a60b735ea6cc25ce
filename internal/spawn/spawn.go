// Package spawn starts child processes from one OS thread that lives as
// long as the process.
//
// Linux delivers a child's parent-death signal (Pdeathsig,
// PR_SET_PDEATHSIG) when the thread that forked it exits, not when its
// process does. The Go runtime forks from whichever thread the calling
// goroutine happens to run on, and it ends a thread whose goroutine exits
// while locked to it (as the agent's output writers do, to confine a
// changed file system identity to one thread). A child forked from such a
// thread was killed with SIGKILL as soon as an unrelated goroutine ended
// there. Forking every child whose Pdeathsig matters from one locked thread
// that never exits makes the signal mean what it says: the agent died.
package spawn

import (
	"os/exec"
	"runtime"
	"sync"
)

type request struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	start    sync.Once
	requests chan request
)

// Start is cmd.Start run on the process's forking thread.
func Start(cmd *exec.Cmd) error {
	start.Do(func() {
		requests = make(chan request)
		go fork(requests)
	})
	done := make(chan error, 1)
	requests <- request{cmd: cmd, done: done}
	return <-done
}

// fork starts commands for the life of the process. Its thread is locked
// and never unlocked, so no other goroutine runs on it and it never exits
// before the process does.
func fork(requests <-chan request) {
	runtime.LockOSThread()
	for r := range requests {
		r.done <- r.cmd.Start()
	}
}
