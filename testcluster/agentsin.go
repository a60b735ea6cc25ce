package testcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// AgentsIn returns the PIDs of the `shoal agent` processes running now
// whose data dir is dir or below it, read from /proc: whatever PID each
// has, so an agent restarted by hand after cluster.json was written is
// found, and a PID recorded there that the kernel has since given to
// another process is not.
func AgentsIn(dir string) ([]int, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("agents in %s: %w", dir, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("agents in %s: %w", dir, err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile, or not ours to read
		}
		dd, ok := agentDataDir(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
		if !ok {
			continue
		}
		if !filepath.IsAbs(dd) {
			cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
			if err != nil {
				continue
			}
			dd = filepath.Join(cwd, dd)
		}
		if dd = filepath.Clean(dd); dd == root || strings.HasPrefix(dd, root+string(filepath.Separator)) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// agentDataDir is the --data-dir of a `shoal agent` command line.
func agentDataDir(argv []string) (string, bool) {
	if len(argv) < 2 || filepath.Base(argv[0]) != "shoal" || argv[1] != "agent" {
		return "", false
	}
	for i, a := range argv[2:] {
		if v, ok := strings.CutPrefix(a, "--data-dir="); ok {
			return v, true
		}
		if a == "--data-dir" && i+3 < len(argv) {
			return argv[i+3], true
		}
	}
	return "", false
}

// StopAgentsIn stops every agent AgentsIn finds under dir: SIGTERM (a
// graceful leave), then SIGKILL for those still running after grace. It
// returns how many it stopped.
func StopAgentsIn(dir string, grace time.Duration) (int, error) {
	pids, err := AgentsIn(dir)
	if err != nil {
		return 0, err
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	gone := func(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid) }
	if Poll(grace, func() bool {
		for _, pid := range pids {
			if !gone(pid) {
				return false
			}
		}
		return true
	}) != nil {
		for _, pid := range pids {
			if !gone(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	return len(pids), nil
}

// isZombie reports whether pid has exited and waits for its parent.
func isZombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses and may
	// itself hold spaces or parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}
