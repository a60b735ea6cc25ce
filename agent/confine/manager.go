package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	cgroups "github.com/containerd/cgroups/v3"
)

// Version is the cgroup hierarchy a Manager uses.
type Version int

const (
	// V1 is the legacy hierarchy: one mount per controller.
	V1 Version = 1
	// V2 is the unified hierarchy.
	V2 Version = 2
)

func (v Version) String() string { return fmt.Sprintf("cgroup v%d", int(v)) }

// mountRoot is where hierarchies are mounted: the unified one in unified
// mode, one directory per v1 controller (and "unified") otherwise.
const mountRoot = "/sys/fs/cgroup"

// Support is what a node's cgroups can do for its jobs.
type Support struct {
	Version Version
	// Parent is the attempts' parent cgroup (its path in the memory
	// hierarchy on v1, where the controllers may sit at different paths).
	Parent string
	// Controllers are the controllers attempts' cgroups get.
	Controllers []string
	// Swap is true when a memory limit also stops the job from swapping
	// (v1 memsw, v2 memory.swap.max); without it the limit sets
	// memory.swappiness to 0 (v1) or leaves swap alone (v2).
	Swap bool
	// Devices is true when an attempt's cgroup can deny it devices
	// (Limits.DenyDevices): the devices controller on v1, a
	// BPF_CGROUP_DEVICE program on v2. DevicesOff says why not.
	Devices    bool
	DevicesOff string
}

func (s Support) String() string {
	swap := "swap limited"
	if !s.Swap {
		swap = "swap not accounted"
	}
	ctrls := strings.Join(s.Controllers, " ")
	if ctrls == "" {
		ctrls = "no controllers"
	}
	devs := "device rules"
	if !s.Devices {
		devs = "no device rules"
	}
	return fmt.Sprintf("%s (%s; %s; %s) under %s", s.Version, ctrls, swap, devs, s.Parent)
}

// has says whether attempts' cgroups get a controller.
func (s Support) has(c string) bool {
	for _, x := range s.Controllers {
		if x == c {
			return true
		}
	}
	return false
}

// Manager makes the attempts' cgroups of one node. Its methods may be
// called from several goroutines.
type Manager struct {
	cfg Config
	sup Support
	v1  *v1Manager
	v2  *v2Manager
}

// Support says what this node's cgroups give each attempt.
func (m *Manager) Support() Support { return m.sup }

// v1Need and v2Need are the controllers without which a node does not
// confine: kill without a race (freezer; cgroup.kill is in every v2
// cgroup), the memory limit, the CPU quota and CPU accounting. pids is
// used where mounted.
var (
	v1Need = []string{"memory", "cpu", "cpuacct", "freezer"}
	v2Need = []string{"memory", "cpu"}
)

// Open finds what this node's cgroups offer and creates the attempts'
// parent cgroup. Its error is the reason the node's jobs cannot be
// confined, one line for the agent's warning and for `shoal nodes`.
func Open(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mode := cgroups.Mode()
	unified := ""
	switch mode {
	case cgroups.Unavailable:
		return nil, errors.New("no cgroup filesystem is mounted at " + mountRoot)
	case cgroups.Unified:
		unified = mountRoot
	case cgroups.Hybrid:
		unified = mountRoot + "/unified"
	}
	switch cfg.Hierarchy {
	case HierarchyV2:
		if unified == "" {
			return nil, errors.New("cgroup v2 asked for, but no cgroup2 hierarchy is mounted at " + mountRoot + " or " + mountRoot + "/unified")
		}
		return openV2(cfg, unified, v2Need)
	case HierarchyV1:
		if mode == cgroups.Unified {
			return nil, errors.New("cgroup v1 asked for, but " + mountRoot + " is a cgroup2 (unified) hierarchy")
		}
		return openV1(cfg)
	}
	if mode == cgroups.Unified {
		return openV2(cfg, unified, v2Need)
	}
	if mode == cgroups.Hybrid {
		// A hybrid machine whose unified hierarchy has the controllers
		// (none bound to v1) is a v2 machine with a v1 mount for systemd.
		if m, err := openV2(cfg, unified, v2Need); err == nil {
			return m, nil
		}
	}
	return openV1(cfg)
}

// why adds what to do to an error the agent cannot fix itself.
func why(err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w (the agent needs root, or a cgroup delegated to its user)", err)
	case errors.Is(err, errReadOnly):
		return fmt.Errorf("%w (the cgroup filesystem is mounted read-only, as in a container without cgroup rights)", err)
	}
	return err
}

// parentDirs are the parent cgroup's directories, one per hierarchy.
func (m *Manager) parentDirs() []string {
	if m.v1 != nil {
		return m.v1.dirs(m.v1.parent)
	}
	return []string{filepath.Join(m.v2.mount, m.v2.group)}
}
