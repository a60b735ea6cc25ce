package netns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// strayPids returns the pids running in any of namespaces or carrying
// MarkerEnv with a value beginning with prefix, except this process.
func strayPids(ctx context.Context, prefix string, namespaces []string) ([]int, error) {
	set := map[int]bool{}
	var errs []error
	for _, ns := range namespaces {
		out, err := run(ctx, "ip", "netns", "pids", ns)
		if err != nil {
			if _, statErr := os.Stat(filepath.Join(netnsDir, ns)); errors.Is(statErr, os.ErrNotExist) {
				continue // already gone
			}
			errs = append(errs, err)
			continue
		}
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil {
				set[pid] = true
			}
		}
	}
	for _, pid := range markedPids(prefix) {
		set[pid] = true
	}
	delete(set, os.Getpid())
	pids := make([]int, 0, len(set))
	for pid := range set {
		if alive(pid) {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids, errors.Join(errs...)
}

// markedPids scans /proc for processes whose environment holds MarkerEnv
// with a value beginning with prefix.
func markedPids(prefix string) []int {
	entries, _ := os.ReadDir("/proc")
	needle := []byte(MarkerEnv + "=" + prefix)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, needle) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// killStrays SIGKILLs every stray process of the instance and waits until
// they are gone.
func killStrays(ctx context.Context, prefix string, namespaces []string) error {
	pids, err := strayPids(ctx, prefix, namespaces)
	for _, pid := range pids {
		if kerr := syscall.Kill(pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
			err = errors.Join(err, fmt.Errorf("kill -9 %d: %w", pid, kerr))
		}
	}
	if len(pids) == 0 {
		return err
	}
	werr := waitFor(ctx, 10*time.Second, fmt.Sprintf("stray processes %v of %s to exit", pids, prefix), func(context.Context) (bool, error) {
		for _, pid := range pids {
			if alive(pid) {
				return false, nil
			}
		}
		return true, nil
	})
	return errors.Join(err, werr)
}
