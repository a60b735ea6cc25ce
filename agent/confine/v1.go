package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// v1Manager makes attempts' cgroups in the legacy hierarchies.
type v1Manager struct {
	hier   cgroup1.Hierarchy
	parent cgroup1.Path
	subs   []cgroup1.Subsystem
}

// dirOf is a subsystem's directory for a cgroup path: every cgroup1
// subsystem the package uses has one.
type dirOf interface{ Path(string) string }

func openV1(cfg Config) (*Manager, error) {
	all := []cgroup1.Subsystem{
		// The kernel-memory files are gone from recent kernels and not
		// needed: skip them rather than fail the statistics.
		cgroup1.NewMemory(mountRoot, cgroup1.OptionalSwap(), cgroup1.IgnoreModules("kmem", "kmem.tcp")),
		cgroup1.NewCpu(mountRoot),
		cgroup1.NewCpuacct(mountRoot),
		cgroup1.NewPids(mountRoot),
		cgroup1.NewFreezer(mountRoot),
		// Used where mounted: device rules are written only for an
		// attempt that has some, and a new cgroup inherits its parent's.
		cgroup1.NewDevices(mountRoot),
	}
	var subs []cgroup1.Subsystem
	var have []string
	for _, s := range all {
		if isMount(filepath.Join(mountRoot, string(s.Name())), unix.CGROUP_SUPER_MAGIC) {
			subs = append(subs, s)
			have = append(have, string(s.Name()))
		}
	}
	sup := Support{Version: V1, Controllers: have}
	sup.Devices = sup.has("devices")
	if !sup.Devices {
		sup.DevicesOff = "cgroup v1: no devices hierarchy is mounted at " + mountRoot + "/devices"
	}
	for _, n := range v1Need {
		if !sup.has(n) {
			return nil, fmt.Errorf("cgroup v1: no %s hierarchy is mounted at %s/%s (confining needs %v)", n, mountRoot, n, v1Need)
		}
	}
	hier := func() ([]cgroup1.Subsystem, error) { return subs, nil }
	parent := cgroup1.StaticPath(cfg.Parent)
	if !filepath.IsAbs(cfg.Parent) {
		parent = cgroup1.NestedPath(cfg.Parent)
	}
	if _, err := cgroup1.New(parent, &specs.LinuxResources{}, cgroup1.WithHierarchy(hier)); err != nil {
		return nil, why(fmt.Errorf("cgroup v1: create the parent cgroup %s: %w", cfg.Parent, err))
	}
	mem, err := parent(cgroup1.Memory)
	if err != nil {
		return nil, fmt.Errorf("cgroup v1: the parent cgroup %s: %w", cfg.Parent, err)
	}
	sup.Parent = mem
	cpuPath, err := parent(cgroup1.Cpu)
	if err != nil {
		return nil, fmt.Errorf("cgroup v1: the parent cgroup %s: %w", cfg.Parent, err)
	}
	if err := weighParents(filepath.Join(mountRoot, "cpu", cpuPath), "cpu.shares", parentLevels(cfg.Parent), 1024, 262144); err != nil {
		return nil, why(fmt.Errorf("cgroup v1: %w", err))
	}
	_, err = os.Stat(filepath.Join(mountRoot, "memory", mem, "memory.memsw.limit_in_bytes"))
	sup.Swap = err == nil
	return &Manager{cfg: cfg, sup: sup, v1: &v1Manager{hier: hier, parent: parent, subs: subs}}, nil
}

// isMount says whether dir is the root of a filesystem of type magic.
func isMount(dir string, magic int64) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && int64(st.Type) == magic
}

// path is the cgroup path of a child of the parent.
func (v *v1Manager) path(name string) cgroup1.Path {
	return func(s cgroup1.Name) (string, error) {
		p, err := v.parent(s)
		if err != nil {
			return "", err
		}
		return filepath.Join(p, name), nil
	}
}

func (v *v1Manager) dirs(p cgroup1.Path) []string {
	var out []string
	for _, s := range v.subs {
		if sp, err := p(s.Name()); err == nil {
			out = append(out, s.(dirOf).Path(sp))
		}
	}
	return out
}

func (v *v1Manager) dir(p cgroup1.Path, n cgroup1.Name) string {
	for _, s := range v.subs {
		if s.Name() == n {
			if sp, err := p(n); err == nil {
				return s.(dirOf).Path(sp)
			}
		}
	}
	return ""
}

func (v *v1Manager) create(sup Support, cfg Config, name string, l Limits) (*v1Group, error) {
	p := v.path(name)
	dirs := v.dirs(p)
	for _, d := range dirs {
		if _, err := os.Lstat(d); err == nil {
			return nil, fmt.Errorf("%w: %s", ErrExists, d)
		}
	}
	res := &specs.LinuxResources{}
	if l.MemoryBytes > 0 {
		lim := int64(l.MemoryBytes)
		res.Memory = &specs.LinuxMemory{Limit: &lim}
		if sup.Swap {
			// memsw is memory plus swap: equal to the limit, no swap.
			res.Memory.Swap = &lim
		} else {
			none := uint64(0)
			res.Memory.Swappiness = &none
		}
	}
	if l.CPUs > 0 {
		period, quota := cpuQuota(cfg.CPUPeriod, l.CPUs)
		shares := cpuShares(l.CPUs)
		res.CPU = &specs.LinuxCPU{Period: &period, Quota: &quota, Shares: &shares}
	}
	if l.Pids > 0 {
		n := l.Pids
		res.Pids = &specs.LinuxPids{Limit: &n}
	}
	if len(l.DenyDevices) > 0 {
		// Below a parent that allows every device (a new cgroup's
		// default is its parent's), each line of devices.deny takes one
		// device away.
		res.Devices = denyRules(l.DenyDevices)
	}
	cg, err := cgroup1.New(p, res, cgroup1.WithHierarchy(v.hier))
	if err != nil {
		for _, d := range dirs {
			os.Remove(d) // what was made before the error; empty
		}
		return nil, why(err)
	}
	return &v1Group{m: v, path: p, cg: cg}, nil
}

// v1Group is one attempt's cgroup in the legacy hierarchies.
type v1Group struct {
	m    *v1Manager
	path cgroup1.Path
	cg   cgroup1.Cgroup
}

func (g *v1Group) dirs() []string { return g.m.dirs(g.path) }

func (g *v1Group) add(pid int) error { return g.cg.AddProc(uint64(pid)) }

// procs lists the freezer's processes: the hierarchy Kill freezes.
func (g *v1Group) procs() ([]int, error) {
	ps, err := g.cg.Processes(cgroup1.Freezer, true)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.Pid
	}
	return out, nil
}

// signalAll freezes, kills and thaws: the library has no v1 Kill.
func (g *v1Group) signalAll(deadline time.Time) (int, error) {
	return freezeKillThaw(v1Freezer(g.m.dir(g.path, cgroup1.Freezer)), g.procs, deadline)
}

func (g *v1Group) freezer() freezer { return v1Freezer(g.m.dir(g.path, cgroup1.Freezer)) }

func (g *v1Group) usage() (Usage, error) {
	st, err := g.cg.Stat(cgroup1.IgnoreNotExist)
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	if c := st.CPU; c != nil && c.Usage != nil {
		u.CPU = time.Duration(c.Usage.Total)
		u.User = time.Duration(c.Usage.User)
		if c.Throttling != nil {
			u.Throttled = time.Duration(c.Throttling.ThrottledTime)
		}
		u.System = time.Duration(c.Usage.Kernel)
	}
	if m := st.Memory; m != nil && m.Usage != nil {
		u.PeakMemory = m.Usage.Max
		u.MemoryFailcnt = m.Usage.Failcnt
		if m.Usage.Limit < 1<<62 { // unlimited is the largest page multiple
			u.MemoryLimit = m.Usage.Limit
		}
	}
	if o := st.MemoryOomControl; o != nil {
		u.OOMKills = o.OomKill
	}
	return u, nil
}

func (g *v1Group) delete() error {
	err := g.cg.Delete()
	if errors.Is(err, cgroup1.ErrCgroupDeleted) {
		return nil
	}
	return err
}

// cpuShares weighs an attempt's cgroup as its CPUs' worth of processes
// (1024 each on v1, the kernel's weight of one task): with the default
// weight of one, a loaded node's scheduler would give all of an attempt's
// ranks together the share of a single process of the agent's cgroup.
func cpuShares(cpus float64) uint64 {
	return uint64(max(2, min(262144, int64(cpus*1024+0.5))))
}

// cpuWeight is cpuShares on v2's scale (cpu.weight 100 for one task).
func cpuWeight(cpus float64) uint64 {
	return uint64(max(1, min(10000, int64(cpus*100+0.5))))
}

// cpuQuota is the CFS period and quota, in microseconds, for a number of
// CPUs: at least 1 ms of quota, which the kernel requires.
func cpuQuota(period time.Duration, cpus float64) (uint64, int64) {
	p := uint64(period / time.Microsecond)
	q := int64(cpus*float64(p) + 0.5)
	return p, max(q, 1000)
}
