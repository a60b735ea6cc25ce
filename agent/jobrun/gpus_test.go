package jobrun

import (
	"slices"
	"testing"

	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestGPUEnv_MIGByUUID: on a node whose inventory holds MIG instances
// (NVML's, here through the fake at the NVML boundary), an attempt's
// CUDA_VISIBLE_DEVICES names its devices by UUID, which is all CUDA
// takes for a MIG instance; the other variables keep the node's indices.
// A node of whole GPUs keeps the indices in CUDA_VISIBLE_DEVICES too.
func TestGPUEnv_MIGByUUID(t *testing.T) {
	t.Parallel()
	devs, err := probe.ScanNVML(probe.FakeNVMLMIG(), nil)
	if err != nil {
		t.Fatal(err)
	}
	att := &raftfsm.Attempt{N: 1, GPUs: []raftfsm.NodeGPUs{{Node: "n0", Indices: []int{1, 3}}}}
	tests := []struct {
		name  string
		devs  []probe.GPUDevice
		cuda  string
		shoal string
	}{
		{name: "MIG node", devs: devs,
			cuda: "CUDA_VISIBLE_DEVICES=MIG-fake0000-0000-0000-0000-000000000002,GPU-fake0000-0000-0000-0000-000000000001", shoal: "SHOAL_GPUS=1,3"},
		{name: "whole GPUs", devs: make([]probe.GPUDevice, 4), cuda: "CUDA_VISIBLE_DEVICES=1,3", shoal: "SHOAL_GPUS=1,3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := testNode(t, raftfsm.New(), func() {})
			n.cfg.GPUs, n.cfg.CUDAIDs = len(tt.devs), probe.CUDADeviceIDs(tt.devs)
			env := n.gpuEnv(att)
			if !slices.Contains(env, tt.cuda) || !slices.Contains(env, tt.shoal) || !slices.Contains(env, "ROCR_VISIBLE_DEVICES=1,3") {
				t.Errorf("gpuEnv = %q, want %s, %s and ROCR_VISIBLE_DEVICES=1,3", env, tt.cuda, tt.shoal)
			}
		})
	}
}
