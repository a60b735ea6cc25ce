package agent

import (
	"fmt"
	"slices"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/probe"
)

// gpuDeviceMap is the device node of each of the node's GPUs by index,
// from nodes, its /dev/nvidiaN nodes in the order of their numbers. Where
// NVML found the GPUs it reported each one's minor number, which is its
// /dev/nvidiaN and need not be its index (the driver numbers GPUs in the
// order it probed them, NVML in PCI bus order), so GPU i gets the node of
// its own minor rather than the i-th node. Without minors (GPUs found by
// nvidia-smi or sysfs, or declared) nodes are taken in their order, as
// they must. A minor the directory lacks is an error: rules from a
// guessed map would take a job's own GPU away.
func gpuDeviceMap(gpus []probe.GPUDevice, nodes []confine.Device) ([]confine.Device, error) {
	if len(gpus) == 0 || slices.ContainsFunc(gpus, func(g probe.GPUDevice) bool { return g.Minor < 0 }) {
		return nodes, nil
	}
	out := make([]confine.Device, len(gpus))
	for i, g := range gpus {
		d := confine.Device{Major: confine.NvidiaMajor, Minor: uint32(g.Minor)}
		if !slices.Contains(nodes, d) {
			return nil, fmt.Errorf("GPU %d (%s) is /dev/nvidia%d to NVML, and the device directory has no %s", i, g.UUID, g.Minor, d)
		}
		out[i] = d
	}
	return out, nil
}
