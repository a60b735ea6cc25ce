package deadline

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer the watchdog's timer goroutine and the
// test may both use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchdogStopsAStalledRun: a run still going at its deadline exits 3
// and says where it was waiting.
func TestWatchdogStopsAStalledRun(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	codes := make(chan int, 1)
	stop := watchdog("bench-test", 20*time.Millisecond, &out, func(c int) { codes <- c })
	defer stop()
	select {
	case c := <-codes:
		if c != 3 {
			t.Fatalf("exit status %d, want 3", c)
		}
	case <-time.After(time.Minute):
		t.Fatal("the watchdog did not stop a run past its deadline")
	}
	s := out.String()
	if !strings.Contains(s, "bench-test: no result after 20ms") || !strings.Contains(s, "TestWatchdogStopsAStalledRun") {
		t.Fatalf("watchdog output lacks the reason or the stacks:\n%.400s", s)
	}
}

// TestWatchdogStoppedInTime: a run that printed its table before the
// deadline is not stopped.
func TestWatchdogStoppedInTime(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	exited := make(chan int, 1)
	stop := watchdog("bench-test", 50*time.Millisecond, &out, func(c int) { exited <- c })
	stop()
	// A second watchdog with the same deadline, left running, marks when the
	// first would have fired: wait on it rather than on a sleep.
	later := make(chan int, 1)
	defer watchdog("bench-marker", 100*time.Millisecond, &lockedBuffer{}, func(c int) { later <- c })()
	<-later
	select {
	case <-exited:
		t.Fatalf("a stopped watchdog exited the run:\n%s", out.String())
	default:
	}
	if d := watchdog("bench-test", 0, &out, func(int) { t.Error("a zero deadline fired") }); d == nil {
		t.Fatal("nil stop")
	}
}
