// Package swapfile replaces a small file in place so that a reader sees
// either its old contents or its new ones, never a part of each.
//
// The agent keeps records that other processes read while it may be writing
// them (a node's fencing lease, read by the guard that freezes jobs when it
// lapses; a supervisor's record of its job, read by a restarted agent). Each
// is written to a temporary file in the same directory and renamed over the
// old one: rename within a directory is atomic on every local file system.
//
// There is no fsync: the records need to outlive a process, not the machine.
// A machine that goes down takes the readers and the jobs with it, and an
// fsync costs tens of milliseconds on a busy disk, on paths (a job's start,
// a lease renewal) that are timed.
package swapfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces dir/name by b. dir must exist; the file gets the mode
// os.CreateTemp gives (0600), whatever the old file had.
func Write(dir, name string, b []byte) error {
	tmp, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return nil
}
