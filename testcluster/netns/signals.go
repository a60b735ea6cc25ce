package netns

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// live holds the testbeds not yet closed, so that SIGINT, SIGTERM or SIGHUP
// tear them down before the process dies.
var live = struct {
	sync.Mutex
	set   map[*Testbed]struct{}
	after map[int]func() // AtSignal's, keyed for cancel; run in no set order
	next  int
	once  sync.Once
}{set: map[*Testbed]struct{}{}, after: map[int]func(){}}

func watchSignals() {
	live.once.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go onSignal(ch)
	})
}

func register(tb *Testbed) {
	watchSignals()
	live.Lock()
	live.set[tb] = struct{}{}
	live.Unlock()
}

// AtSignal registers f to run when SIGINT, SIGTERM or SIGHUP tears the live
// testbeds down, after they are closed and before the process dies. The
// teardown re-raises the signal, so a caller's deferred cleanup (its scratch
// directory, say) never runs; this is where it goes instead. cancel
// unregisters f, for a caller that cleaned up by itself.
func AtSignal(f func()) (cancel func()) {
	watchSignals()
	live.Lock()
	id := live.next
	live.next++
	live.after[id] = f
	live.Unlock()
	return func() {
		live.Lock()
		delete(live.after, id)
		live.Unlock()
	}
}

func unregister(tb *Testbed) {
	live.Lock()
	delete(live.set, tb)
	live.Unlock()
}

// onSignal closes every live testbed, then re-raises the signal with its
// default action so the process dies as it would have.
func onSignal(ch <-chan os.Signal) {
	sig := (<-ch).(syscall.Signal)
	live.Lock()
	tbs := make([]*Testbed, 0, len(live.set))
	for tb := range live.set {
		tbs = append(tbs, tb)
	}
	live.Unlock()
	var wg sync.WaitGroup
	for _, tb := range tbs {
		wg.Go(func() {
			tb.log.Warn("signal: tearing testbed down", "signal", sig.String())
			_ = tb.Close()
		})
	}
	wg.Wait()
	live.Lock()
	after := make([]func(), 0, len(live.after))
	for _, f := range live.after {
		after = append(after, f)
	}
	live.Unlock()
	for _, f := range after {
		f()
	}
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
}
