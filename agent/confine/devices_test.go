package confine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDenyOthers(t *testing.T) {
	t.Parallel()
	nv := func(minor uint32) Device { return Device{NvidiaMajor, minor} }
	whole := func(ds ...Device) [][]Device {
		out := make([][]Device, len(ds))
		for i, d := range ds {
			out[i] = []Device{d}
		}
		return out
	}
	four := []Device{nv(0), nv(1), nv(2), nv(3)}
	capn := func(minor uint32) Device { return Device{237, minor} }
	// GPU 0 in MIG mode: instances 0 and 1 in GPU instance 1 (its access
	// node cap12, their compute instances cap13 and cap14), instance 2 in
	// GPU instance 2 (cap21, cap22); GPU 1 whole.
	mig := [][]Device{
		{nv(0), capn(12), capn(13)},
		{nv(0), capn(12), capn(14)},
		{nv(0), capn(21), capn(22)},
		{nv(1)},
	}
	for _, tc := range []struct {
		name string
		gpus [][]Device
		own  []int
		want []Device
	}{
		{"no GPUs", nil, []int{0}, nil},
		{"holds one of two", whole(four[:2]...), []int{0}, []Device{nv(1)}},
		{"holds the other", whole(four[:2]...), []int{1}, []Device{nv(0)}},
		{"holds none: denied all", whole(four...), nil, four},
		{"holds all: denied none", whole(four...), []int{3, 1, 0, 2}, nil},
		{"holds two of four", whole(four...), []int{1, 3}, []Device{nv(0), nv(2)}},
		{"an index past the inventory is ignored", whole(four[:2]...), []int{0, 7}, []Device{nv(1)}},
		{"minors other than the index", whole(nv(4), nv(2)), []int{1}, []Device{nv(4)}},
		{"DRM render nodes", whole(Device{DRMMajor, 128}, Device{DRMMajor, 129}), []int{1}, []Device{{DRMMajor, 128}}},
		{"MIG: the others' caps, not the shared GPU node", mig, []int{2}, []Device{capn(12), capn(13), capn(14), nv(1)}},
		{"MIG: a compute instance beside another in its GPU instance", mig, []int{0}, []Device{capn(14), capn(21), capn(22), nv(1)}},
		{"MIG: the whole GPU beside a MIG GPU", mig, []int{3}, []Device{nv(0), capn(12), capn(13), capn(14), capn(21), capn(22)}},
		{"MIG: holds none", mig, nil, []Device{nv(0), capn(12), capn(13), capn(14), capn(21), capn(22), nv(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := DenyOthers(tc.gpus, tc.own); !slices.Equal(got, tc.want) {
				t.Errorf("DenyOthers(%v, %v) = %v, want %v", tc.gpus, tc.own, got, tc.want)
			}
		})
	}
}

// mknodGPUs makes character device nodes name → major:minor in dir: GPUs
// with no driver behind them, which is what this machine can give.
func mknodGPUs(t *testing.T, dir string, nodes map[string]Device) {
	t.Helper()
	for name, d := range nodes {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(d.Major, d.Minor))); err != nil {
			t.Skipf("make a fake GPU device node: %v", err)
		}
	}
}

func TestGPUDevicesReadsTheNodesInTheirOrder(t *testing.T) {
	t.Parallel()
	needRoot(t)
	nv := t.TempDir()
	// nvidia10 after nvidia2: by number, not by name; nvidiactl is not a GPU.
	mknodGPUs(t, nv, map[string]Device{"nvidia0": {195, 0}, "nvidia2": {195, 7}, "nvidia10": {195, 10},
		"nvidiactl": {195, 255}, "dri/renderD128": {226, 128}})
	if err := os.WriteFile(filepath.Join(nv, "nvidia-uvm"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := GPUDevices(nv)
	if want := []Device{{195, 0}, {195, 7}, {195, 10}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("GPUDevices with NVIDIA nodes = %v, %v; want %v", got, err, want)
	}
	drm := t.TempDir()
	mknodGPUs(t, drm, map[string]Device{"dri/renderD129": {226, 129}, "dri/renderD128": {226, 128}, "dri/card0": {226, 0}})
	got, err = GPUDevices(drm)
	if want := []Device{{226, 128}, {226, 129}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("GPUDevices with DRM render nodes = %v, %v; want %v", got, err, want)
	}
	if got, err := GPUDevices(t.TempDir()); err != nil || got != nil {
		t.Errorf("GPUDevices of a node without GPUs = %v, %v; want none", got, err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "nvidia0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := GPUDevices(bad); err == nil || !strings.Contains(err.Error(), "not a character device") {
		t.Errorf("GPUDevices with a regular file nvidia0: %v, want it refused", err)
	}
}

// TestDeviceRulesDenyOtherGPUs runs a process in an attempt's cgroup that
// denies one of two fake GPUs and has it open both. The nodes have no
// driver, so an open the cgroup lets through fails in the driver lookup
// (ENXIO), and one it denies fails before that (EPERM): the kernel checks
// the device rules first.
func TestDeviceRulesDenyOtherGPUs(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		if !m.Support().Devices {
			t.Skip(m.Support().DevicesOff)
		}
		dir := t.TempDir()
		mknodGPUs(t, dir, map[string]Device{"nvidia0": {195, 0}, "nvidia1": {195, 1}})
		nodes, err := GPUDevices(dir)
		if err != nil {
			t.Fatal(err)
		}
		gpus := [][]Device{nodes[:1], nodes[1:]}
		open := `for g in nvidia0 nvidia1; do echo "$g $( (: < ` + dir + `/$g) 2>&1 )"; done`
		for own, want := range map[int][2]string{0: {"No such device or address", "Operation not permitted"},
			1: {"Operation not permitted", "No such device or address"}} {
			cg := newCgroup(t, m, "job-20-"+string(rune('0'+own)), Limits{DenyDevices: DenyOthers(gpus, []int{own})})
			j := startJob(t, cg, open)
			for i, w := range want {
				if got := j.line(t); !strings.HasPrefix(got, "nvidia") || !strings.HasSuffix(got, w) {
					t.Errorf("%s: a job holding GPU %d opened GPU %d: %q, want %q", m.Support().Version, own, i, got, w)
				}
			}
		}
		// Outside any attempt's cgroup both nodes reach the (absent) driver.
		j := startJob(t, nil, open)
		for i := 0; i < 2; i++ {
			if got := j.line(t); !strings.HasSuffix(got, "No such device or address") {
				t.Errorf("outside the cgroups: %q, want no such device", got)
			}
		}
	})
}

// A node whose cgroups cannot deny devices refuses device rules with the
// reason, before it makes anything.
func TestDeviceRulesNeedTheHierarchy(t *testing.T) {
	t.Parallel()
	m := &Manager{cfg: DefaultConfig(), sup: Support{Version: V2, DevicesOff: "cgroup v2: cannot attach a BPF_CGROUP_DEVICE program: operation not permitted"}}
	_, err := m.New("job-1-0", Limits{DenyDevices: []Device{{NvidiaMajor, 1}}})
	if !errors.Is(err, ErrNoController) || !strings.Contains(err.Error(), "BPF_CGROUP_DEVICE") {
		t.Errorf("New with device rules on a node without them: %v, want ErrNoController with the reason", err)
	}
}
