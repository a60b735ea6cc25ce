package agent

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/nodestate"
)

// openCgroups opens this node's cgroups for jobs. An agent that
// cannot (not root, no writable hierarchy, --cgroups=false) starts anyway:
// one warning line, jobs found by process group and environment marker as
// before, jobs with a memory limit refused here, and `confined: no` in
// `shoal nodes`.
func (a *Agent) openCgroups() {
	if a.cfg.NoCgroups {
		a.cgroupsOff = "cgroups turned off in the agent's configuration (--cgroups=false)"
		a.log.Warn("jobs run unconfined on this node: " + a.cgroupsOff)
		return
	}
	m, err := jobrun.OpenCgroups(a.cfg.Name, a.cfg.DataDir, confine.DefaultConfig())
	if err != nil {
		a.cgroupsOff = err.Error()
		a.log.Warn("jobs run unconfined on this node (no memory limits, kill by process group and environment marker): " + a.cgroupsOff)
		return
	}
	a.cgroups = m
	a.log.Info("jobs confined in cgroups", "cgroups", m.Support().String())
}

// gpuDevices are the device nodes each of the node's gpus GPUs needs, by
// index, of which each attempt's cgroup denies those of the GPUs it does
// not hold: a whole GPU's /dev/nvidiaN (or DRM render node), a MIG
// instance's GPU node and its GPU and compute instance capability nodes
// (/dev/nvidia-caps), as NVIDIA's MIG access model has it. nil, with one
// line in the log saying why, where GPUs are bound by environment
// variables only: no cgroups, a hierarchy that cannot deny devices, or a
// /dev or MIG capability table that does not match the inventory
// (denying by a wrong map would take a job's own GPU away).
func (a *Agent) gpuDevices(gpus int) [][]confine.Device {
	if gpus == 0 {
		return nil
	}
	const unbound = "GPUs bound by environment variables only, not by cgroup device rules: "
	switch {
	case a.cgroups == nil:
		a.log.Warn(unbound + "jobs run unconfined here")
		return nil
	case !a.cgroups.Support().Devices:
		a.log.Warn(unbound + a.cgroups.Support().DevicesOff)
		return nil
	}
	devs, err := gpuDeviceNodes(a.static.GPUs, gpus, cmp.Or(a.cfg.Testing.GPUDevDir, "/dev"),
		cmp.Or(a.cfg.Testing.MIGMinorsFile, confine.MIGMinorsFile))
	if err != nil {
		a.log.Warn(unbound + err.Error())
		return nil
	}
	a.log.Info("GPUs bound by cgroup device rules", "devices", fmt.Sprint(devs))
	return devs
}

// gossipStatic adds to a node's static state whether it confines its jobs.
// The reason is cut short: the whole state travels in one gossip packet.
func (a *Agent) gossipStatic(s nodestate.Static) nodestate.Static {
	s.Confined, s.Unconfined = a.cgroups != nil, a.cgroupsOff
	if len(s.Unconfined) > maxUnconfinedReason {
		s.Unconfined = strings.ToValidUTF8(s.Unconfined[:maxUnconfinedReason-3], "") + "..."
	}
	return s
}

// maxUnconfinedReason bounds the reason a node gossips for not confining.
const maxUnconfinedReason = 200

// Confined reports whether this agent runs its jobs in cgroups, and if not, why.
func (a *Agent) Confined() (bool, string) { return a.cgroups != nil, a.cgroupsOff }

// AttemptCgroups names the attempts' cgroups this node has now; tests use it
// to check that none is left once jobs end.
func (a *Agent) AttemptCgroups() []string {
	if a.jobNode == nil {
		return nil
	}
	return a.jobNode.AttemptCgroups()
}

// closeCgroups removes this agent's parent cgroup once it stops (its job
// loop has killed and removed the attempts' cgroups): an agent that stops
// for good leaves nothing in the hierarchy, and test clusters start and
// stop many agents on one machine.
func (a *Agent) closeCgroups() {
	if a.cgroups == nil {
		return
	}
	if err := a.cgroups.Close(); err != nil {
		a.log.Warn("remove the jobs' parent cgroup", "err", err)
	}
}
