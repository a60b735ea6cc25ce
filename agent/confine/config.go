package confine

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// Hierarchy names for Config.Hierarchy.
const (
	HierarchyAuto = "auto"
	HierarchyV1   = "v1"
	HierarchyV2   = "v2"
)

// Config says where the agent puts its attempts' cgroups.
type Config struct {
	// Parent is the cgroup attempts' cgroups are made in: relative to the
	// agent's own cgroup in each hierarchy, or absolute from the root of
	// each hierarchy. Default "shoal".
	Parent string
	// Hierarchy is HierarchyAuto (default: v2 when the unified hierarchy
	// offers memory and cpu, else v1), HierarchyV1 or HierarchyV2.
	Hierarchy string
	// CPUPeriod is the CFS period a CPU quota is given per (the kernel's
	// default, 100 ms); between 1 ms and 1 s.
	CPUPeriod time.Duration
}

// DefaultConfig is what an agent uses unless told otherwise.
func DefaultConfig() Config {
	return Config{Parent: "shoal", Hierarchy: HierarchyAuto, CPUPeriod: 100 * time.Millisecond}
}

// Validate says what is wrong with a config, in one line.
func (c Config) Validate() error {
	if c.Parent == "" || path.Clean(c.Parent) != c.Parent || c.Parent == "/" ||
		strings.HasPrefix(c.Parent, "..") || strings.Contains(c.Parent, "/../") {
		return fmt.Errorf("cgroup parent %q: want a clean path other than / with no .., e.g. shoal or /shoal", c.Parent)
	}
	if strings.HasPrefix(c.Parent, "/sys/") {
		return errors.New("cgroup parent " + c.Parent + ": give the cgroup's path, not its directory under /sys/fs/cgroup")
	}
	switch c.Hierarchy {
	case HierarchyAuto, HierarchyV1, HierarchyV2:
	default:
		return fmt.Errorf("cgroup hierarchy %q: want %s, %s or %s", c.Hierarchy, HierarchyAuto, HierarchyV1, HierarchyV2)
	}
	if c.CPUPeriod < time.Millisecond || c.CPUPeriod > time.Second {
		return fmt.Errorf("cgroup CPU period %v: want between 1ms and 1s (the kernel's bounds)", c.CPUPeriod)
	}
	return nil
}
