package confine

import (
	"errors"
	"os"
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
