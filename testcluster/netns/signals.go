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
	set  map[*Testbed]struct{}
	once sync.Once
}{set: map[*Testbed]struct{}{}}

func register(tb *Testbed) {
	live.once.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go onSignal(ch)
	})
	live.Lock()
	live.set[tb] = struct{}{}
	live.Unlock()
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
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
}
