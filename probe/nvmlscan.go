package probe

import (
	"errors"
	"fmt"
	"log/slog"
)

// ScanNVML lists the node's schedulable NVIDIA devices through lib, which
// must be initialised: each GPU in NVML's order, or, for a GPU in MIG
// mode, its MIG instances in slot order in its place (as Slurm's gpu/nvml
// and Nomad's NVIDIA plugin do), since CUDA can hand a process a MIG
// instance but not a MIG-mode GPU whole. A GPU in MIG mode without
// instances, or whose instances NVML cannot list, offers nothing to
// schedule and is logged to log (nil: not).
func ScanNVML(lib NVML, log *slog.Logger) ([]GPUDevice, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n, err := lib.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("count NVML devices: %w", err)
	}
	var out []GPUDevice
	for i := range n {
		dev, err := lib.Device(i)
		if err != nil {
			return nil, fmt.Errorf("NVML device %d of %d: %w", i, n, err)
		}
		gpu, err := nvmlDevice(dev, "")
		if err != nil {
			return nil, fmt.Errorf("NVML device %d: %w", i, err)
		}
		mig, err := dev.MIGEnabled()
		if err != nil {
			return nil, fmt.Errorf("NVML device %d (%s): MIG mode: %w", i, gpu.UUID, err)
		}
		if !mig {
			out = append(out, gpu)
			continue
		}
		insts, err := migInstances(dev, gpu.UUID, gpu.Minor)
		if err != nil {
			// Left out, not the scan failed: nvidia-smi, the fallback,
			// would list this GPU whole, and CUDA cannot hand a process
			// a MIG-mode GPU whole.
			log.Warn("GPU in MIG mode whose MIG instances NVML cannot list: left out", "gpu", i, "uuid", gpu.UUID, "err", err)
			continue
		}
		if len(insts) == 0 {
			log.Warn("GPU in MIG mode holds no MIG instance: nothing to schedule on it until an administrator creates some (nvidia-smi mig -cgi ... -C)",
				"gpu", i, "uuid", gpu.UUID, "model", gpu.Model)
		}
		out = append(out, insts...)
	}
	return out, nil
}

// migInstances lists the MIG instances of a GPU in MIG mode. Slots are
// sparse: an instance destroyed leaves an empty slot before others.
func migInstances(gpu NVMLDevice, parent string, minor int) ([]GPUDevice, error) {
	slots, err := gpu.MaxMIGDevices()
	if err != nil {
		return nil, fmt.Errorf("MIG slots: %w", err)
	}
	var out []GPUDevice
	for s := range slots {
		d, err := gpu.MIGDevice(s)
		if errors.Is(err, ErrNVMLNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("MIG slot %d: %w", s, err)
		}
		inst, err := nvmlDevice(d, parent)
		if err != nil {
			return nil, fmt.Errorf("MIG slot %d: %w", s, err)
		}
		inst.Minor = minor
		inst.GI, inst.CI = instanceIDs(d)
		out = append(out, inst)
	}
	return out, nil
}

// instanceIDs are a MIG instance's GPU and compute instance IDs, or -1
// and -1 where NVML cannot give both: the instance is still scheduled and
// bound by CUDA_VISIBLE_DEVICES, and the agent, which needs them to find
// its capability nodes, does not confine MIG instances by device rules.
func instanceIDs(d NVMLDevice) (gi, ci int) {
	gi, err := d.GPUInstanceID()
	if err != nil {
		return -1, -1
	}
	ci, err = d.ComputeInstanceID()
	if err != nil {
		return -1, -1
	}
	return gi, ci
}

// nvmlDevice reads one device's identity; memory NVML cannot give is 0,
// unknown, as nvidia-smi's "[N/A]" is.
func nvmlDevice(d NVMLDevice, parent string) (GPUDevice, error) {
	uuid, err := d.UUID()
	if err != nil {
		return GPUDevice{}, fmt.Errorf("UUID: %w", err)
	}
	name, err := d.Name()
	if err != nil {
		return GPUDevice{}, fmt.Errorf("%s: name: %w", uuid, err)
	}
	mem, err := d.MemoryTotal()
	if err != nil && !errors.Is(err, ErrNVMLNotSupported) {
		return GPUDevice{}, fmt.Errorf("%s: memory: %w", uuid, err)
	}
	minor := -1 // a MIG instance's is its GPU's, which the caller sets
	if parent == "" {
		if minor, err = d.MinorNumber(); err != nil {
			return GPUDevice{}, fmt.Errorf("%s: minor number: %w", uuid, err)
		}
	}
	return GPUDevice{Model: name, MemBytes: mem, UUID: uuid, Parent: parent, Minor: minor, GI: -1, CI: -1, Source: "nvml"}, nil
}
