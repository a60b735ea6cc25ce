package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// Every benchmark ends: its own waits are bounded, and -deadline bounds
// the whole run besides, so a wait nobody bounded (a retry loop without a
// context, a peer that never answers) stops the run with the stacks of
// what was waiting instead of leaving it printing nothing.

// deadlineFlag adds -deadline, with default def, to a benchmark's flags.
func deadlineFlag(fs *flag.FlagSet, def time.Duration) *time.Duration {
	return fs.Duration("deadline", def, "stop with every goroutine's stack and exit status 3 if the run has not printed its table by then; 0 = no deadline")
}

// watchdog starts the deadline of benchmark name: when d passes before
// stop is called, it writes why and every goroutine's stack to w and
// calls exit(3). d <= 0 starts nothing.
func watchdog(name string, d time.Duration, w io.Writer, exit func(int)) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	t := time.AfterFunc(d, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(w, "shoal-dev %s: no result after %v (-deadline); what was running:\n%s\n", name, d, buf)
		exit(3)
	})
	return func() { t.Stop() }
}

// startDeadline is watchdog on stderr, exiting the process.
func startDeadline(name string, d time.Duration) (stop func()) {
	return watchdog(name, d, os.Stderr, os.Exit)
}
