package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/probe"
)

// gpuDeviceNodes are the device nodes each of the node's gpus GPUs
// (inv, its inventory's devices, where it has them) needs by index, read
// from the device directory dev (/dev) and, on a node with MIG instances,
// the driver's table of MIG capabilities migMinors and its nodes in
// dev/nvidia-caps. GPU nodes no device of the inventory needs (a GPU in
// MIG mode without instances, one whose instances NVML could not list)
// follow as one more entry, past the indices attempts hold, so that every
// attempt is denied them. An error says what does not match the
// inventory.
func gpuDeviceNodes(inv []probe.GPUDevice, gpus int, dev, migMinors string) ([][]confine.Device, error) {
	nodes, err := confine.GPUDevices(dev)
	if err != nil {
		return nil, err
	}
	devs, err := gpuDeviceMap(inv, nodes)
	if err != nil {
		return nil, err
	}
	if len(devs) != gpus {
		return nil, fmt.Errorf("%s has %d GPU device nodes %v, the inventory %d GPUs", dev, len(devs), nodes, gpus)
	}
	var unheld []confine.Device
	for _, d := range nodes {
		if !slices.ContainsFunc(devs, func(need []confine.Device) bool { return slices.Contains(need, d) }) {
			unheld = append(unheld, d)
		}
	}
	if slices.ContainsFunc(inv, probe.GPUDevice.MIG) {
		if devs, err = withMIGCaps(devs, inv, migMinors, filepath.Join(dev, "nvidia-caps")); err != nil {
			return nil, err
		}
	}
	if len(unheld) > 0 {
		devs = append(devs, unheld)
	}
	return devs, nil
}

// gpuDeviceMap is the device node of each of the node's GPUs by index,
// from nodes, its /dev/nvidiaN nodes in the order of their numbers. Where
// NVML found the GPUs it reported each one's minor number, which is its
// /dev/nvidiaN and need not be its index (the driver numbers GPUs in the
// order it probed them, NVML in PCI bus order), so GPU i gets the node of
// its own minor rather than the i-th node; a MIG instance gets its GPU's.
// Without minors (GPUs found by nvidia-smi or sysfs, or declared) nodes
// are taken in their order, as they must. A minor the directory lacks is
// an error: rules from a guessed map would take a job's own GPU away.
func gpuDeviceMap(gpus []probe.GPUDevice, nodes []confine.Device) ([][]confine.Device, error) {
	if len(gpus) == 0 || slices.ContainsFunc(gpus, func(g probe.GPUDevice) bool { return g.Minor < 0 }) {
		if slices.ContainsFunc(gpus, probe.GPUDevice.MIG) {
			return nil, fmt.Errorf("MIG instances beside GPUs of unknown device numbers: which node is whose is not known")
		}
		out := make([][]confine.Device, len(nodes))
		for i, d := range nodes {
			out[i] = []confine.Device{d}
		}
		return out, nil
	}
	out := make([][]confine.Device, len(gpus))
	for i, g := range gpus {
		d := confine.Device{Major: confine.NvidiaMajor, Minor: uint32(g.Minor)}
		if !slices.Contains(nodes, d) {
			return nil, fmt.Errorf("GPU %d (%s) is /dev/nvidia%d to NVML, and the device directory has no %s", i, g.UUID, g.Minor, d)
		}
		out[i] = []confine.Device{d}
	}
	return out, nil
}

// withMIGCaps adds to each MIG instance's nodes in devs the capability
// nodes of its GPU instance and compute instance, which a process needs
// besides its GPU's node to use the instance: found by their minors in
// the driver's table migMinors and stat'ed in capsDir. Any instance whose
// capabilities cannot be found so is an error, not left open: the rules
// of the others would deny its capabilities to no one, and those of the
// whole GPUs' attempts would not deny them.
func withMIGCaps(devs [][]confine.Device, inv []probe.GPUDevice, migMinors, capsDir string) ([][]confine.Device, error) {
	table, err := confine.ReadMIGMinors(migMinors)
	if err != nil {
		return nil, fmt.Errorf("MIG instances: %w", err)
	}
	var caps []confine.MIGCap
	var owner []int
	for i, g := range inv {
		if !g.MIG() {
			continue
		}
		if g.GI < 0 || g.CI < 0 {
			return nil, fmt.Errorf("MIG instance %d (%s): NVML gave no GPU and compute instance IDs, which name its capability nodes", i, g.UUID)
		}
		caps = append(caps, confine.MIGCap{GPU: g.Minor, GI: g.GI, CI: -1}, confine.MIGCap{GPU: g.Minor, GI: g.GI, CI: g.CI})
		owner = append(owner, i, i)
	}
	found, err := confine.MIGCapDevices(table, capsDir, caps)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("MIG capability nodes: %w (NVIDIA's tools make them on first use through nvidia-modprobe: run nvidia-smi once and restart the agent; a driver loaded with nv_cap_enable_devfs=0 keeps them under /proc/driver/nvidia/capabilities, which device rules cannot hold)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("MIG capability nodes: %w", err)
	}
	for k, d := range found {
		if d.Major == confine.NvidiaMajor || d.Major == confine.DRMMajor {
			return nil, fmt.Errorf("MIG capability node of %s is %s, a GPU's major, not the nvidia-caps driver's", caps[k], d)
		}
		devs[owner[k]] = append(devs[owner[k]], d)
	}
	return devs, nil
}
