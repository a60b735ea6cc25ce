package confine

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

// Limits are what one attempt may use on one node; zero is no limit.
type Limits struct {
	// MemoryBytes is the memory limit, swap included: the kernel's OOM
	// killer ends a process of the attempt when the attempt reaches it.
	MemoryBytes uint64
	// CPUs is the CPU quota in CPUs (cpus per rank × ranks on the node).
	CPUs float64
	// Pids is the largest number of processes and threads, 0 or at least
	// MinPids.
	Pids int64
	// DenyDevices are the character devices the attempt's processes may
	// not open, read, write or make: the node's GPUs other than its own
	// (DenyOthers). Needs Support.Devices.
	DenyDevices []Device
}

// MinPids is the smallest process limit: the job helper is a Go program
// whose runtime starts several threads, and it joins the cgroup before it
// executes the job; with too few left it cannot start the job at all.
const MinPids = 64

func (l Limits) validate() error {
	switch {
	case l.MemoryBytes > math.MaxInt64:
		return fmt.Errorf("memory limit %d: too large", l.MemoryBytes)
	case math.IsNaN(l.CPUs) || l.CPUs < 0 || l.CPUs > 1<<20:
		return fmt.Errorf("CPU limit %v: want a number of CPUs", l.CPUs)
	case l.Pids < 0 || (l.Pids > 0 && l.Pids < MinPids):
		return fmt.Errorf("process limit %d: want at least %d (the job helper's threads count too)", l.Pids, MinPids)
	}
	return nil
}

// Usage is what an attempt's processes used, as the kernel counted it.
type Usage struct {
	// CPU is the CPU time of all its processes, to the nanosecond (v1
	// cpuacct.usage) or microsecond (v2).
	CPU time.Duration
	// User and System split it (v1 counts these in clock ticks, 10 ms).
	User, System time.Duration
	// Throttled is how long the CPU quota held the attempt back.
	Throttled time.Duration
	// PeakMemory is the most memory the attempt used at once, in bytes
	// (page cache included, as the limit counts it); 0 where the kernel
	// does not record it (v2 before Linux 5.19).
	PeakMemory uint64
	// MemoryLimit is the limit in force, 0 for none.
	MemoryLimit uint64
	// OOMKills is how many of its processes the OOM killer ended.
	OOMKills uint64
	// MemoryFailcnt is how often the attempt hit its limit (v1 failcnt,
	// v2 memory.events max), OOM or not.
	MemoryFailcnt uint64
}

// CPUSeconds is the CPU time in seconds (sacct's TotalCPU).
func (u Usage) CPUSeconds() float64 { return u.CPU.Seconds() }

// group is one hierarchy's way of doing what Cgroup does.
type group interface {
	dirs() []string
	add(pid int) error
	procs() ([]int, error)
	// signalAll sends SIGKILL to every process once and says how many
	// there were; deadline bounds any wait inside it.
	signalAll(deadline time.Time) (int, error)
	usage() (Usage, error)
	delete() error
	freezer() freezer
}

var (
	_ group = (*v1Group)(nil)
	_ group = (*v2Group)(nil)
)

// Cgroup is one attempt's cgroup on this node.
type Cgroup struct {
	name string
	g    group
}

// New creates the cgroup name (e.g. "job-12-0") under the manager's parent
// with limits. A cgroup of that name that exists already is ErrExists: the
// caller kills and deletes it (an agent that died left it) or picks
// another name.
func (m *Manager) New(name string, l Limits) (*Cgroup, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := l.validate(); err != nil {
		return nil, err
	}
	if l.MemoryBytes > 0 && !m.sup.has("memory") {
		return nil, fmt.Errorf("memory limit: %w: this node's cgroups have no memory controller", ErrNoController)
	}
	if l.CPUs > 0 && !m.sup.has("cpu") {
		return nil, fmt.Errorf("CPU limit: %w: this node's cgroups have no cpu controller", ErrNoController)
	}
	if l.Pids > 0 && !m.sup.has("pids") {
		return nil, fmt.Errorf("process limit: %w: this node's cgroups have no pids controller", ErrNoController)
	}
	if len(l.DenyDevices) > 0 && !m.sup.Devices {
		return nil, fmt.Errorf("device rules: %w: %s", ErrNoController, m.sup.DevicesOff)
	}
	var g group
	var err error
	if m.v1 != nil {
		g, err = m.v1.create(m.sup, m.cfg, name, l)
	} else {
		g, err = m.v2.create(m.sup, m.cfg, name, l)
	}
	if err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", name, err)
	}
	return &Cgroup{name: name, g: g}, nil
}

func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || filepath.Base(name) != name {
		return fmt.Errorf("cgroup name %q: want one path component, e.g. job-12-0", name)
	}
	return nil
}

// Name is the cgroup's name under the parent.
func (c *Cgroup) Name() string { return c.name }

// Dirs are the cgroup's directories, one per hierarchy on v1: a process
// joins the cgroup by writing its pid to cgroup.procs in each (what
// jobexec.Spec.Cgroup takes).
func (c *Cgroup) Dirs() []string { return c.g.dirs() }

// Add moves a process (all its threads) into the cgroup. Processes it
// starts afterwards start inside; children it started before stay where
// they are, which is why jobs join through the helper before they exec.
func (c *Cgroup) Add(pid int) error {
	if err := c.g.add(pid); err != nil {
		return fmt.Errorf("add process %d to cgroup %s: %w", pid, c.name, err)
	}
	return nil
}

// Freezer is the cgroup's freezer file and the words that freeze and thaw
// it, for a process other than the agent to stop the attempt with
// (agent/fence): writing freeze stops every process in the cgroup where it
// stands, thaw lets them go on.
func (c *Cgroup) Freezer() (file, freeze, thaw string) {
	f := c.g.freezer()
	return f.file, f.freeze, f.thaw
}

// Procs lists the processes in the cgroup.
func (c *Cgroup) Procs() ([]int, error) {
	p, err := c.g.procs()
	if err != nil {
		return nil, fmt.Errorf("processes of cgroup %s: %w", c.name, err)
	}
	return p, nil
}

// killRound bounds one round of Kill: freezing, then waiting for the
// killed processes to leave, before it signals again.
const killRound = time.Second

// Kill sends SIGKILL to every process in the cgroup and returns once it is
// empty, trying again while processes remain (a fork racing the signal) until
// ctx ends. Processes that are the caller's children leave the cgroup when
// they exit; the caller still reaps them.
func (c *Cgroup) Kill(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		deadline := time.Now().Add(killRound)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		n, err := c.g.signalAll(deadline)
		if err != nil {
			return fmt.Errorf("kill cgroup %s: %w", c.name, err)
		}
		if n == 0 {
			return nil
		}
		for time.Now().Before(deadline) {
			left, err := c.g.procs()
			if err != nil {
				return fmt.Errorf("kill cgroup %s: %w", c.name, err)
			}
			if len(left) == 0 {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kill cgroup %s: processes %v still in it: %w", c.name, left, ctx.Err())
			case <-tick.C:
			}
		}
		if err := ctx.Err(); err != nil {
			left, _ := c.g.procs()
			return fmt.Errorf("kill cgroup %s: processes %v still in it: %w", c.name, left, err)
		}
	}
}

// Usage reads what the attempt has used so far; after Kill, in total.
func (c *Cgroup) Usage() (Usage, error) {
	u, err := c.g.usage()
	if err != nil {
		return Usage{}, fmt.Errorf("usage of cgroup %s: %w", c.name, err)
	}
	return u, nil
}

// Delete removes the cgroup; it must be empty (Kill first). Deleting a
// cgroup that is gone is not an error.
func (c *Cgroup) Delete() error {
	if err := c.g.delete(); err != nil {
		return fmt.Errorf("delete cgroup %s: %w", c.name, err)
	}
	return nil
}
