package probe

import "github.com/shoal-hpc/shoal/nodestate"

// GPUDevice is one schedulable GPU of a node, what an attempt is handed:
// a whole GPU, or a MIG instance of a GPU in MIG mode (whose GPU is then
// not schedulable itself: its instances are). A node numbers its devices
// 0.. in the order of Static.GPUs.
type GPUDevice struct {
	// Model names the device as the inventory groups it into PEs.
	Model string `json:"model"`
	// MemBytes is the device's memory in bytes, 0 when unknown.
	MemBytes uint64 `json:"mem_bytes,omitempty"`
	// UUID is NVML's "GPU-..." or "MIG-..."; empty where the device was
	// found without NVML (nvidia-smi, sysfs).
	UUID string `json:"uuid,omitempty"`
	// Parent is the UUID of the GPU a MIG instance belongs to; empty
	// for a whole GPU.
	Parent string `json:"parent,omitempty"`
	// Minor is the GPU's /dev/nvidiaN number as NVML reports it, which
	// need not be its index: a MIG instance's is its GPU's, whose node
	// every instance of it opens; -1 where unknown (nvidia-smi, sysfs).
	Minor int `json:"minor"`
	// GI and CI are a MIG instance's GPU instance and compute instance
	// IDs on its GPU, which with Minor name its capabilities in the
	// driver's table (gpuMINOR/giGI/ciCI/access, each guarded by a
	// /dev/nvidia-caps node); -1 where NVML did not give them. Read for
	// MIG instances only.
	GI int `json:"gpu_instance"`
	CI int `json:"compute_instance"`
	// Source says how the device was found: "nvml", "nvidia-smi" or
	// "sysfs".
	Source string `json:"source"`
}

// MIG reports whether d is a MIG instance.
func (d GPUDevice) MIG() bool { return d.Parent != "" }

// gpuPEs groups devices into the inventory's GPU PEs.
func gpuPEs(devs []GPUDevice) []nodestate.PE {
	pes := make([]nodestate.PE, 0, len(devs))
	for _, d := range devs {
		pes = append(pes, nodestate.PE{Kind: "gpu", Model: d.Model, Count: 1, MemBytes: d.MemBytes})
	}
	return groupPEs(pes)
}

// CUDADeviceIDs are what CUDA_VISIBLE_DEVICES names each of devs by, in
// the node's numbering, or nil where the node's numbers do. A MIG
// instance has no number CUDA takes (CUDA numbers the instances a process
// sees, not a node's), so a node with any MIG instance names every device
// by its UUID; a node of whole GPUs keeps the numbers, which nvidia-smi
// and users read more easily.
func CUDADeviceIDs(devs []GPUDevice) []string {
	mig := false
	for _, d := range devs {
		mig = mig || d.MIG()
	}
	if !mig {
		return nil
	}
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.UUID
	}
	return ids
}
