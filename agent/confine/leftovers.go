package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
)

// List names the cgroups under the parent. When the agent starts, those
// that are not of a running attempt were left by an agent that died:
// Load, Kill and Delete them.
func (m *Manager) List() ([]string, error) {
	var names []string
	for _, d := range m.parentDirs() {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, fmt.Errorf("list the cgroups in %s: %w", d, err)
		}
		for _, e := range ents {
			if e.IsDir() && !slices.Contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// Load is the existing cgroup name under the parent.
func (m *Manager) Load(name string) (*Cgroup, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if m.v1 != nil {
		p := m.v1.path(name)
		cg, err := cgroup1.Load(p, cgroup1.WithHierarchy(m.v1.hier))
		if errors.Is(err, cgroup1.ErrCgroupDeleted) {
			err = fs.ErrNotExist
		}
		if err != nil {
			return nil, fmt.Errorf("load cgroup %s: %w", name, err)
		}
		return &Cgroup{name: name, g: &v1Group{m: m.v1, path: p, cg: cg}}, nil
	}
	group := filepath.Join(m.v2.group, name)
	dir := filepath.Join(m.v2.mount, group)
	if _, err := os.Lstat(dir); err != nil {
		return nil, fmt.Errorf("load cgroup %s: %w", name, err)
	}
	cg, err := cgroup2.Load(group, cgroup2.WithMountpoint(m.v2.mount))
	if err != nil {
		return nil, fmt.Errorf("load cgroup %s: %w", name, err)
	}
	return &Cgroup{name: name, g: newV2Group(dir, cg)}, nil
}

// Close removes the attempts' parent cgroup when no attempt's cgroup is
// left in it, so that an agent that stops for good leaves nothing behind.
// A parent that still holds cgroups stays (ErrParentBusy); a later Open
// makes it again when it is gone.
func (m *Manager) Close() error {
	names, err := m.List()
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: %v", ErrParentBusy, names)
	}
	var errs []error
	for _, d := range m.parentDirs() {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove the parent cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
