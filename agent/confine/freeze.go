package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// freezer is a cgroup's freezer file and how it says it is frozen: v1's
// freezer.state, v2's cgroup.freeze with cgroup.events.
type freezer struct {
	file          string // written to freeze and thaw
	freeze, thaw  string
	state, frozen string // read until it contains frozen
}

func v1Freezer(dir string) freezer {
	return freezer{file: dir + "/freezer.state", freeze: "FROZEN", thaw: "THAWED", state: dir + "/freezer.state", frozen: "FROZEN"}
}

func v2Freezer(dir string) freezer {
	return freezer{file: dir + "/cgroup.freeze", freeze: "1", thaw: "0", state: dir + "/cgroup.events", frozen: "frozen 1"}
}

// freezeKillThaw freezes the cgroup so that nothing in it can fork, sends
// SIGKILL to every process, and thaws it so that they die; it says how
// many processes there were. A cgroup that does not freeze by deadline (a
// task in uninterruptible sleep) is signalled anyway: Kill's loop catches
// what forked meanwhile. The library's Freeze waits for the frozen state
// with no deadline, and its v2 fallback kill reaps the processes it
// killed, which would take the exit status of the agent's own children
// from the agent's Wait; hence this.
func freezeKillThaw(f freezer, procs func() ([]int, error), deadline time.Time) (int, error) {
	if err := os.WriteFile(f.file, []byte(f.freeze), 0); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil // deleted: nothing left to kill
		}
		return 0, fmt.Errorf("freeze: %w", err)
	}
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(f.state)
		if err != nil || strings.Contains(string(b), f.frozen) {
			break
		}
		time.Sleep(time.Millisecond) // the freezer has no event to wait on
	}
	pids, err := procs()
	for _, pid := range pids {
		if kerr := unix.Kill(pid, unix.SIGKILL); kerr != nil && !errors.Is(kerr, unix.ESRCH) {
			err = errors.Join(err, fmt.Errorf("kill %d: %w", pid, kerr))
		}
	}
	if terr := os.WriteFile(f.file, []byte(f.thaw), 0); terr != nil {
		err = errors.Join(err, fmt.Errorf("thaw: %w", terr))
	}
	return len(pids), err
}
