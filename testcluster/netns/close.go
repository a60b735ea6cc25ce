package netns

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// teardownTimeout bounds one Close or Sweep.
const teardownTimeout = 60 * time.Second

// Close stops every process the testbed started (SIGTERM to each process
// group, SIGKILL after Options.StopGrace), kills whatever else still runs in
// its namespaces or carries its [MarkerEnv], and deletes its namespaces
// (which removes the veths, bridges and qdiscs in them), its /etc/netns
// files, its owner file and, if it made it, its log directory. It is
// idempotent and safe to call concurrently; every call returns the first
// call's result.
func (tb *Testbed) Close() error {
	tb.closeOnce.Do(func() { tb.closeErr = tb.teardown() })
	return tb.closeErr
}

func (tb *Testbed) teardown() error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	defer unregister(tb)

	tb.mu.Lock()
	tb.closed = true
	procs := append([]*Process(nil), tb.procs...)
	namespaces := append([]string(nil), tb.namespaces...)
	etcDirs := append([]string(nil), tb.etcDirs...)
	nsFiles := append([]string(nil), tb.nsFiles...)
	tb.mu.Unlock()

	var (
		errMu sync.Mutex
		errs  []error
	)
	addErr := func(err error) {
		if err != nil {
			errMu.Lock()
			errs = append(errs, err)
			errMu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { addErr(p.Stop(tb.grace)) })
	}
	wg.Wait()
	addErr(killStrays(ctx, tb.prefix, namespaces))
	addErr(removeNSFiles(nsFiles))
	// Nodes first, fabric (created first) last.
	for i := len(namespaces) - 1; i >= 0; i-- {
		if _, err := run(ctx, "ip", "netns", "del", namespaces[i]); err != nil {
			addErr(fmt.Errorf("delete namespace: %w", err))
		}
	}
	for _, dir := range etcDirs {
		addErr(os.RemoveAll(dir))
	}
	if tb.ownDir {
		addErr(os.RemoveAll(tb.dir))
	}
	if err := os.Remove(filepath.Join(ownerDir, tb.prefix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		addErr(err)
	}
	err := errors.Join(errs...)
	if err != nil {
		err = fmt.Errorf("netns testbed %s close: %w", tb.prefix, err)
	}
	tb.log.Info("testbed closed", "processes", len(procs), "namespaces", len(namespaces),
		"took", time.Since(start).Round(time.Millisecond), "err", err)
	return err
}
