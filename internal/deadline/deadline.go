package deadline

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// Flag adds -deadline, with default def, to a benchmark's flags.
func Flag(fs *flag.FlagSet, def time.Duration) *time.Duration {
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

// Start is watchdog on stderr, exiting the process: a benchmark calls it
// once its flags are parsed and the returned stop once its table is out.
func Start(name string, d time.Duration) (stop func()) {
	return watchdog(name, d, os.Stderr, os.Exit)
}
