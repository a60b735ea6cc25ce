package raftnode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/raft"
)

// A server whose raft log cannot be written (a full or read-only disk)
// keeps running: raft logs the failed append and the leader retries it,
// but the server's copy of the state stops moving while it answers as
// before. logWatch notices: it sits between raft and the log store and
// keeps the last write's error, and a write probe in the raft directory
// notices a full disk even while no entry is being written. Node.Fault
// says what is wrong; the agent reports it and steps the server down.

// watchedLogs is raft's log store with its write errors noted in watch.
type watchedLogs struct {
	raft.LogStore
	watch *logWatch
}

var _ raft.LogStore = (*watchedLogs)(nil)

func (w *watchedLogs) StoreLog(l *raft.Log) error {
	err := w.LogStore.StoreLog(l)
	w.watch.stored(err)
	return err
}

func (w *watchedLogs) StoreLogs(ls []*raft.Log) error {
	err := w.LogStore.StoreLogs(ls)
	w.watch.stored(err)
	return err
}

// logWatch holds the last log write's error and the last probe's.
type logWatch struct {
	mu       sync.Mutex
	storeErr error
	probeErr error
}

func (w *logWatch) stored(err error) {
	w.mu.Lock()
	w.storeErr = err
	w.mu.Unlock()
}

func (w *logWatch) probed(err error) {
	w.mu.Lock()
	w.probeErr = err
	w.mu.Unlock()
}

// fault is the last log write's error, else the last probe's; nil when
// both went through. A failed log write stands until a later one
// succeeds (the leader retries the entries the server missed), so a
// probe that finds room again does not hide a store that still fails.
func (w *logWatch) fault() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.storeErr != nil:
		return fmt.Errorf("raft log write failed: %w", w.storeErr)
	case w.probeErr != nil:
		return fmt.Errorf("raft directory not writable: %w", w.probeErr)
	}
	return nil
}

// probeSize is what the write probe writes and syncs: about a batch of
// raft entries, so a disk too full for one is found full.
const probeSize = 64 << 10

// probeWrite writes probeSize bytes to a file in dir, syncs and removes
// it.
func probeWrite(dir string) error {
	path := filepath.Join(dir, "write-probe")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(make([]byte, probeSize))
	serr := f.Sync()
	cerr := f.Close()
	rerr := os.Remove(path)
	return errors.Join(werr, serr, cerr, rerr)
}

// Probe checks that the raft directory takes a write now; Fault reports
// the outcome until the next probe. A backend without a directory (raft's
// in-memory stores) has nothing to probe.
func (n *Node) Probe() error {
	if n.dir == "" {
		return nil
	}
	err := probeWrite(n.dir)
	n.watch.probed(err)
	return err
}

// Fault says why this server's raft log cannot be written, nil when it
// can: the last log write failed (until one succeeds), or the last Probe.
func (n *Node) Fault() error { return n.watch.fault() }
