package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// v2Manager makes attempts' cgroups in the unified hierarchy.
type v2Manager struct {
	mount  string
	parent *cgroup2.Manager
	group  string // the parent's path in the hierarchy
	ctrls  []string
}

// v2Optional are the controllers used where the agent's cgroup offers them.
var v2Optional = []string{"pids"}

// openV2 uses the unified hierarchy mounted at mount; need are the
// controllers it must offer (tests on hybrid machines pass none).
func openV2(cfg Config, mount string, need []string) (*Manager, error) {
	own, err := cgroup2.NestedGroupPath("")
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: the agent's own cgroup: %w", err)
	}
	// The controllers that can be enabled below the parent's parent: the
	// agent's own cgroup's (the delegated one above its leaf), or the
	// root's for an absolute parent.
	base := own
	if filepath.Base(own) == agentLeaf {
		base = filepath.Dir(own)
	}
	if filepath.IsAbs(cfg.Parent) {
		base = "/"
	}
	offered := []string{}
	if b, err := os.ReadFile(filepath.Join(mount, base, "cgroup.controllers")); err == nil {
		offered = strings.Fields(string(b))
	}
	has := func(c string) bool {
		for _, o := range offered {
			if o == c {
				return true
			}
		}
		return false
	}
	var ctrls, missing []string
	for _, c := range need {
		if has(c) {
			ctrls = append(ctrls, c)
		} else {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cgroup v2: cgroup %s offers controllers %q, not %s (bound to cgroup v1 hierarchies, or not delegated)",
			filepath.Join(mount, base), strings.Join(offered, " "), strings.Join(missing, " "))
	}
	if len(need) > 0 {
		for _, c := range v2Optional {
			if has(c) {
				ctrls = append(ctrls, c)
			}
		}
	}
	group := cfg.Parent
	if !filepath.IsAbs(group) {
		root, err := delegatedRoot(mount, own, os.Getpid())
		if err != nil {
			return nil, why(fmt.Errorf("cgroup v2: %w", err))
		}
		group = filepath.Join(root, group)
	}
	res := enable(ctrls)
	if res == nil {
		res = &cgroup2.Resources{}
	}
	// The kernel refuses to enable controllers below a cgroup that has
	// processes of its own (the root excepted): the agent's, when the
	// parent is below it, as with systemd's Delegate=yes.
	busy := func(err error, below string) error {
		if errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("cgroup v2: cannot enable %s below %s: it has processes of its own (run the agent in a leaf cgroup, e.g. systemd DelegateSubgroup=, or give an absolute cgroup parent)",
				strings.Join(ctrls, " "), below)
		}
		return why(fmt.Errorf("cgroup v2: create a cgroup below %s: %w", below, err))
	}
	parent, err := cgroup2.NewManager(mount, group, res)
	if err != nil {
		return nil, busy(err, filepath.Dir(group))
	}
	// Prove that an attempt's cgroup can be made with its controllers.
	probe, err := parent.NewChild("probe", enable(ctrls))
	if err != nil {
		return nil, busy(err, group)
	}
	_, serr := os.Stat(filepath.Join(mount, group, "probe", "memory.swap.max"))
	devErr := probeDevices(probe)
	if err := probe.Delete(); err != nil {
		return nil, fmt.Errorf("cgroup v2: remove %s/probe: %w", group, err)
	}
	if slices.Contains(ctrls, "cpu") {
		if err := weighParents(filepath.Join(mount, group), "cpu.weight", parentLevels(cfg.Parent), 100, 10000); err != nil {
			return nil, why(fmt.Errorf("cgroup v2: %w", err))
		}
	}
	sup := Support{Version: V2, Parent: group, Controllers: ctrls, Swap: serr == nil, Devices: devErr == nil}
	if devErr != nil {
		sup.DevicesOff = "cgroup v2: cannot attach a BPF_CGROUP_DEVICE program: " + devErr.Error()
	}
	return &Manager{cfg: cfg, sup: sup, v2: &v2Manager{mount: mount, parent: parent, group: group, ctrls: ctrls}}, nil
}

// agentLeaf is the cgroup the agent runs in below the one delegated to it
// (systemd's Delegate=yes). The kernel lets no cgroup both hold processes
// and enable controllers for its children, so the agent leaves the
// delegated cgroup to itself in agentLeaf and to its jobs' parent beside
// it. systemd 254 and later start it there (DelegateSubgroup=agent in
// shoal.service); under older ones it moves itself at start.
const agentLeaf = "agent"

// delegatedRoot is the cgroup a relative parent hangs off: the agent's (pid's) own,
// or the one above when the agent already runs in agentLeaf. An agent
// alone in its own cgroup (a service's, delegated) moves into agentLeaf
// below it; one that shares its cgroup with other processes (a login
// session's) stays, and enabling controllers below it fails with the
// reason.
func delegatedRoot(mount, own string, pid int) (string, error) {
	if own == "/" {
		return own, nil
	}
	if filepath.Base(own) == agentLeaf {
		return filepath.Dir(own), nil
	}
	b, err := os.ReadFile(filepath.Join(mount, own, "cgroup.procs"))
	if err != nil {
		return "", fmt.Errorf("the agent's own cgroup: %w", err)
	}
	if strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		return own, nil
	}
	leaf := filepath.Join(mount, own, agentLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("make the agent's leaf cgroup: %w", err)
	}
	// cgroup.procs moves the whole process, every thread of it.
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return "", fmt.Errorf("move the agent into its leaf cgroup %s: %w", filepath.Join(own, agentLeaf), err)
	}
	return own, nil
}

// enable is the resources that turn controllers on, with no limits.
func enable(ctrls []string) *cgroup2.Resources {
	r := &cgroup2.Resources{}
	for _, c := range ctrls {
		switch c {
		case "memory":
			r.Memory = &cgroup2.Memory{}
		case "cpu":
			r.CPU = &cgroup2.CPU{}
		case "pids":
			r.Pids = &cgroup2.Pids{}
		}
	}
	if len(ctrls) == 0 {
		return nil // NewChild then leaves subtree_control alone
	}
	return r
}

// probeDevices attaches to cg the device program an attempt gets, one
// that denies nothing: cgroup v2 has no device controller to look for,
// only the kernel's BPF support (CONFIG_CGROUP_BPF) and the right to load
// programs. The program goes with the cgroup.
func probeDevices(cg *cgroup2.Manager) error {
	return cg.Update(&cgroup2.Resources{Devices: filterRules(nil)})
}

func (v *v2Manager) create(sup Support, cfg Config, name string, l Limits) (*v2Group, error) {
	dir := filepath.Join(v.mount, v.group, name)
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	}
	res := enable(v.ctrls)
	if l.MemoryBytes > 0 {
		lim := int64(l.MemoryBytes)
		res.Memory.Max = &lim
		if sup.Swap {
			none := int64(0)
			res.Memory.Swap = &none
		}
	}
	if l.CPUs > 0 {
		period, quota := cpuQuota(cfg.CPUPeriod, l.CPUs)
		res.CPU.Max = cgroup2.NewCPUMax(&quota, &period)
		w := cpuWeight(l.CPUs)
		res.CPU.Weight = &w
	}
	if l.Pids > 0 {
		res.Pids.Max = l.Pids
	}
	cg, err := v.parent.NewChild(name, res)
	if err != nil {
		return nil, why(err)
	}
	if len(l.DenyDevices) > 0 {
		// A BPF_CGROUP_DEVICE program attached to the attempt's cgroup
		// before any process joins it (github.com/containerd/cgroups/v3
		// builds and attaches it with github.com/cilium/ebpf); the
		// kernel runs it, and those of the cgroups above, on every open
		// of a device node.
		if err := cg.Update(&cgroup2.Resources{Devices: filterRules(l.DenyDevices)}); err != nil {
			_ = cg.Delete() // empty: nothing joined it yet
			return nil, why(fmt.Errorf("attach the device rules: %w", err))
		}
	}
	return newV2Group(dir, cg), nil
}

func newV2Group(dir string, cg *cgroup2.Manager) *v2Group {
	_, err := os.Stat(filepath.Join(dir, "cgroup.kill"))
	return &v2Group{dir: dir, cg: cg, noKillFile: errors.Is(err, fs.ErrNotExist)}
}

// v2Group is one attempt's cgroup in the unified hierarchy.
type v2Group struct {
	dir string
	cg  *cgroup2.Manager
	// noKillFile: the kernel has no cgroup.kill (before 5.14); tests set
	// it to try the freezer on kernels that have.
	noKillFile bool
}

func (g *v2Group) dirs() []string { return []string{g.dir} }

func (g *v2Group) freezer() freezer { return v2Freezer(g.dir) }

func (g *v2Group) add(pid int) error { return g.cg.AddProc(uint64(pid)) }

func (g *v2Group) procs() ([]int, error) {
	ps, err := g.cg.Procs(true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // deleted: empty
	}
	if err != nil {
		return nil, err
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = int(p)
	}
	return out, nil
}

// signalAll writes cgroup.kill: the kernel kills every process in the
// cgroup and its descendants, and forks racing with it are killed too.
// Before Linux 5.14, which has no cgroup.kill, it freezes, kills and thaws.
func (g *v2Group) signalAll(deadline time.Time) (int, error) {
	if g.noKillFile {
		return freezeKillThaw(v2Freezer(g.dir), g.procs, deadline)
	}
	pids, err := g.procs()
	if err != nil || len(pids) == 0 {
		return 0, err
	}
	return len(pids), g.cg.Kill()
}

func (g *v2Group) usage() (Usage, error) {
	st, err := g.cg.StatFiltered(cgroup2.StatCPU | cgroup2.StatMemory | cgroup2.StatMemoryEvents)
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	if c := st.CPU; c != nil {
		u.CPU = time.Duration(c.UsageUsec) * time.Microsecond
		u.User = time.Duration(c.UserUsec) * time.Microsecond
		u.Throttled = time.Duration(c.ThrottledUsec) * time.Microsecond
		u.System = time.Duration(c.SystemUsec) * time.Microsecond
	}
	if m := st.Memory; m != nil {
		u.PeakMemory = m.MaxUsage
		if m.UsageLimit < 1<<62 { // "max" reads as the largest value
			u.MemoryLimit = m.UsageLimit
		}
	}
	if e := st.MemoryEvents; e != nil {
		u.OOMKills = e.OomKill
		u.MemoryFailcnt = e.Max
	}
	return u, nil
}

func (g *v2Group) delete() error {
	if _, err := os.Lstat(g.dir); os.IsNotExist(err) {
		return nil
	}
	return g.cg.Delete()
}
