// Package confine puts every process of a job attempt on a node into one
// cgroup of its own: the kernel then tracks the attempt's processes however
// they fork, setsid or rewrite their environment, enforces its memory and
// CPU limits, and counts what it used.
//
// The agent's side, once per node and once per attempt:
//
//	m, err := confine.Open(confine.DefaultConfig()) // err: why jobs run unconfined here
//	names, err := m.List()                           // left by an agent that died: Load, Kill, Delete
//	cg, err := m.New("job-12-0", confine.Limits{MemoryBytes: 64 << 20, CPUs: 2})
//	spec.Cgroup = cg.Dirs()                          // jobexec: the helper joins it before it execs
//	...
//	err = cg.Kill(ctx)                               // every process in it, however it got there
//	u, err := cg.Usage()                             // CPU seconds, peak memory, OOM kills
//	err = cg.Delete()
//	err = m.Close()                                 // the agent stops: the empty parent goes
//
// # Hierarchies
//
// cgroup v2 (the unified hierarchy current distributions mount at
// /sys/fs/cgroup) is used when the agent's own cgroup there offers the
// memory and cpu controllers (pids too where offered); otherwise cgroup v1 with memory, cpu and
// cpuacct, and freezer (pids and devices when mounted) at /sys/fs/cgroup/NAME, as on
// hybrid machines where systemd mounts an empty cgroup2 at
// /sys/fs/cgroup/unified. Attempts' cgroups go under Config.Parent: by
// default "shoal" below the agent's own cgroup in each hierarchy, so that an
// agent run by systemd with Delegate=yes stays inside what it was given, and
// an absolute parent ("/shoal", like Slurm's /slurm) when the site wants one.
// On v2 the agent's own cgroup must not hold processes itself once
// controllers are enabled below it (the "no internal processes" rule): run
// the agent in a leaf (systemd DelegateSubgroup=) or give an absolute parent;
// Open says so when it finds the cgroup busy.
//
// Limits: the memory limit is memory.max with memory.swap.max 0 on v2, and
// memory.limit_in_bytes with memory.memsw.limit_in_bytes equal to it on v1
// (swap off; without swap accounting, memory.swappiness 0 instead). The CPU
// limit is a CFS quota of CPUs × the period, and a scheduler weight of
// CPUs tasks (cpu.shares, cpu.weight), so that a loaded node shares its
// CPUs between an attempt and the processes outside it as if the attempt's
// ranks ran there uncontained. Device rules (Limits.DenyDevices: the
// nodes of the node's GPUs an attempt does not hold, DenyOthers; for MIG
// instances their capability nodes, MIGCapDevices) are devices.deny lines
// on v1, where the devices hierarchy is mounted, and on v2 a
// BPF_CGROUP_DEVICE program attached to the attempt's cgroup (there is no
// v2 device controller; Open probes whether the kernel lets the agent
// attach one). Kill is cgroup.kill on v2 and
// freeze, SIGKILL every process, thaw on v1, repeated until the cgroup is
// empty or the context ends (also on v2 kernels before 5.14, which have no
// cgroup.kill).
//
// # Why github.com/containerd/cgroups/v3
//
// It is what containerd, and the runtimes and tools built on it, use to
// manage both hierarchies; it is maintained, and it covers what this
// package needs: creating cgroups with limits (from the OCI runtime spec's
// resources on v1, its own on v2), enabling v2 controllers down the tree,
// adding processes, listing them, statistics (cpuacct, memory and
// memory.oom_control on v1; cpu.stat, memory.peak and memory.events on
// v2), cgroup.kill, device rules on both (on v2 it builds and attaches
// the BPF device program with github.com/cilium/ebpf, as runc does), and
// deletion with the kernel's EBUSY retries.
//
// Written here by hand, where the library lacks the call or does it in a
// way an agent cannot use: the v1 kill (the library has none) and the v2
// kill on kernels before 5.14 (its fallback reaps the processes it kills,
// which would steal the exit status of the agent's own child from the
// executor's Wait), both as freeze, SIGKILL, thaw with a deadline on the
// freeze (the library's Freeze waits for the frozen state forever, which a
// task in uninterruptible sleep turns into a hung agent); the check that a
// controller directory is a cgroup mount (statfs); and the job helper's
// join (agent/jobexec writes its own pid to cgroup.procs in each directory
// Dirs gives: one write per hierarchy, with no mount table to parse on
// every job start, and the helper's spec stays plain data).
package confine
