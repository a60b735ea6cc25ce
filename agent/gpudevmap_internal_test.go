package agent

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/probe"
)

// TestGPUDeviceMap: GPUs that NVML found get the device node of their
// own minor number, even where the driver numbered them otherwise than
// their index; GPUs without minors take the nodes in order; a minor
// without its node is refused.
func TestGPUDeviceMap(t *testing.T) {
	t.Parallel()
	nv := func(m uint32) confine.Device { return confine.Device{Major: confine.NvidiaMajor, Minor: m} }
	nodes := []confine.Device{nv(0), nv(1)}
	gpu := func(minor int) probe.GPUDevice {
		return probe.GPUDevice{Model: "fake GPU", UUID: "GPU-fake", Minor: minor, Source: "nvml"}
	}
	mig := func(minor int) probe.GPUDevice {
		return probe.GPUDevice{Model: "fake MIG", UUID: "MIG-fake", Parent: "GPU-fake", Minor: minor, Source: "nvml"}
	}
	tests := []struct {
		name    string
		gpus    []probe.GPUDevice
		want    [][]confine.Device
		wantErr string
	}{
		{name: "minors in index order", gpus: []probe.GPUDevice{gpu(0), gpu(1)}, want: [][]confine.Device{{nv(0)}, {nv(1)}}},
		{name: "driver numbered them the other way", gpus: []probe.GPUDevice{gpu(1), gpu(0)}, want: [][]confine.Device{{nv(1)}, {nv(0)}}},
		{name: "no minors: nodes in order", gpus: []probe.GPUDevice{{Minor: -1}, {Minor: -1}}, want: [][]confine.Device{{nv(0)}, {nv(1)}}},
		{name: "no inventory devices: nodes in order", want: [][]confine.Device{{nv(0)}, {nv(1)}}},
		{name: "minor without a node", gpus: []probe.GPUDevice{gpu(0), gpu(2)}, wantErr: "/dev/nvidia2"},
		{name: "MIG instances share their GPU's node", gpus: []probe.GPUDevice{mig(1), mig(1), gpu(0)},
			want: [][]confine.Device{{nv(1)}, {nv(1)}, {nv(0)}}},
		{name: "MIG instances beside GPUs without minors", gpus: []probe.GPUDevice{mig(0), {Minor: -1}}, wantErr: "unknown device numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := gpuDeviceMap(tt.gpus, nodes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("map = %v, want %v", got, tt.want)
			}
		})
	}
}
