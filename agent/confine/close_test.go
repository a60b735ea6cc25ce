package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Close leaves a parent that still holds an attempt's cgroup and removes
// an empty one.
func TestCloseRemovesAnEmptyParent(t *testing.T) {
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		cg, err := m.New("job-1-1", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); !errors.Is(err, ErrParentBusy) {
			t.Errorf("Close with job-1-1 left: %v, want ErrParentBusy", err)
		}
		if err := cg.Delete(); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		for _, d := range m.parentDirs() {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("parent %s still there after Close: %v", d, err)
			}
		}
	})
}

// The parent cgroups weigh as many tasks as the node has CPUs, every level
// of a nested parent.
func TestParentsWeighTheNodesCPUs(t *testing.T) {
	t.Parallel()
	needRoot(t)
	cfg := DefaultConfig()
	cfg.Parent = fmt.Sprintf("shoal-test-%d-weigh/inner", os.Getpid())
	m, err := openV1(cfg)
	if err != nil {
		t.Skip(err.Error())
	}
	t.Cleanup(func() {
		_ = m.Close()
		for _, d := range m.parentDirs() {
			_ = os.Remove(filepath.Dir(d))
		}
	})
	dir := filepath.Join(mountRoot, "cpu", fmt.Sprintf("shoal-test-%d-weigh", os.Getpid()))
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(own), "\n") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 && slices.Contains(strings.Split(f[1], ","), "cpu") {
			dir = filepath.Join(mountRoot, "cpu", f[2], fmt.Sprintf("shoal-test-%d-weigh", os.Getpid()))
		}
	}
	want := strconv.Itoa(1024 * runtime.NumCPU())
	for _, d := range []string{dir, filepath.Join(dir, "inner")} {
		b, err := os.ReadFile(filepath.Join(d, "cpu.shares"))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s/cpu.shares = %q %v, want %s", d, b, err, want)
		}
	}
}
