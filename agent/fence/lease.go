package fence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoal-hpc/shoal/internal/procstat"
	"github.com/shoal-hpc/shoal/internal/swapfile"
)

// Lease is what the guard enforces: until when the node may run its
// attempts, and what to stop once that has passed.
type Lease struct {
	// Until is the deadline in CLOCK_BOOTTIME nanoseconds (Now).
	Until int64 `json:"until_ns"`
	// Freezers are the freezer files of the attempts' cgroups.
	Freezers []Freezer `json:"freezers,omitempty"`
	// Pgids are the process groups the agent started for attempts.
	Pgids []int `json:"pgids,omitempty"`
	// Groups are Pgids with their leaders' start times, which Write
	// fills in: the guard signals only a group whose leader is still the
	// process written here. Pgids stays beside it for a guard of an
	// earlier version, which reads only that.
	Groups []Group `json:"groups,omitempty"`
}

// Freezer is one cgroup's freezer: the file to write and the words that
// freeze and thaw it (v1 freezer.state FROZEN/THAWED, v2 cgroup.freeze 1/0).
type Freezer struct {
	File   string `json:"file"`
	Freeze string `json:"freeze"`
	Thaw   string `json:"thaw"`
}

// leaseFile is the lease's file name in the fence directory.
const leaseFile = "lease.json"

// Now is the machine's CLOCK_BOOTTIME in nanoseconds.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		panic(fmt.Sprintf("fence: CLOCK_BOOTTIME: %v", err)) // Linux has had it since 2.6.39
	}
	return ts.Nano()
}

// Deadline is Now plus d.
func Deadline(d time.Duration) int64 { return Now() + int64(d) }

// Write replaces the lease in dir, atomically: the guard reads either the
// old lease or the new one. It records each of l.Pgids with its leader's
// start time (Groups): the one l.Groups or the lease in dir has for it,
// else the running leader's, read now; so call it after starting a
// group's leader and before reaping it.
func Write(dir string, l Lease) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("fence dir: %w", err)
	}
	prev, _, _ := Read(dir) // none or unreadable: every group is new
	l.Groups = groups(l, prev.Groups, procstat.Read)
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encode lease: %w", err)
	}
	if err := swapfile.Write(dir, leaseFile, b); err != nil {
		return fmt.Errorf("write lease: %w", err)
	}
	return nil
}

// Read returns the lease in dir; ok is false when there is none.
func Read(dir string) (l Lease, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, leaseFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, fmt.Errorf("read lease: %w", err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return Lease{}, false, fmt.Errorf("read lease %s: %w", filepath.Join(dir, leaseFile), err)
	}
	return l, true, nil
}

// Remove deletes the lease in dir, which ends its guard: the agent stops
// and has ended its attempts itself.
func Remove(dir string) error {
	if err := os.Remove(filepath.Join(dir, leaseFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove lease: %w", err)
	}
	return nil
}
