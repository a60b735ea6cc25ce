package probe

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
)

// The machine that runs these tests has no GPU: NVML is FakeNVML, the
// fake at the NVML boundary.

func TestScanNVML_FakeTwoGPUs(t *testing.T) {
	t.Parallel()
	lib := FakeNVMLTwoGPUs()
	got, err := ScanNVML(lib, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := []GPUDevice{
		{Model: "NVIDIA A100-SXM4-40GB", MemBytes: 40 << 30, UUID: "GPU-fake0000-0000-0000-0000-000000000000", Minor: 0, GI: -1, CI: -1, Source: "nvml"},
		{Model: "NVIDIA A100-SXM4-40GB", MemBytes: 40 << 30, UUID: "GPU-fake0000-0000-0000-0000-000000000001", Minor: 1, GI: -1, CI: -1, Source: "nvml"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("devices = %+v\nwant %+v", got, want)
	}
	if ids := CUDADeviceIDs(got); ids != nil {
		t.Errorf("whole GPUs are named %q in CUDA_VISIBLE_DEVICES, want their numbers (nil)", ids)
	}
}

// TestScanNVML_FakeMIG: a GPU in MIG mode is replaced by its MIG
// instances, found past an empty slot, each with its parent, its
// parent's minor and its GPU and compute instance IDs; the whole
// GPU beside it stays one device; CUDA_VISIBLE_DEVICES then names every
// device by UUID.
func TestScanNVML_FakeMIG(t *testing.T) {
	t.Parallel()
	got, err := ScanNVML(FakeNVMLMIG(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const gpu0 = "GPU-fake0000-0000-0000-0000-000000000000"
	want := []GPUDevice{
		{Model: "NVIDIA A100-SXM4-40GB MIG 3g.20gb", MemBytes: 20 << 30, UUID: "MIG-fake0000-0000-0000-0000-000000000000", Parent: gpu0, Minor: 0, GI: 1, CI: 0, Source: "nvml"},
		{Model: "NVIDIA A100-SXM4-40GB MIG 1g.5gb", MemBytes: 5 << 30, UUID: "MIG-fake0000-0000-0000-0000-000000000002", Parent: gpu0, Minor: 0, GI: 9, CI: 0, Source: "nvml"},
		{Model: "NVIDIA A100-SXM4-40GB MIG 1g.5gb", MemBytes: 5 << 30, UUID: "MIG-fake0000-0000-0000-0000-000000000003", Parent: gpu0, Minor: 0, GI: 10, CI: 0, Source: "nvml"},
		{Model: "NVIDIA A100-SXM4-40GB", MemBytes: 40 << 30, UUID: "GPU-fake0000-0000-0000-0000-000000000001", Minor: 1, GI: -1, CI: -1, Source: "nvml"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("devices = %+v\nwant %+v", got, want)
	}
	wantPEs := []nodestate.PE{
		{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB MIG 3g.20gb", Count: 1, MemBytes: 20 << 30},
		{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB MIG 1g.5gb", Count: 2, MemBytes: 5 << 30},
		{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 1, MemBytes: 40 << 30},
	}
	if pes := gpuPEs(got); !reflect.DeepEqual(pes, wantPEs) {
		t.Errorf("PEs = %+v\nwant %+v", pes, wantPEs)
	}
	wantIDs := []string{"MIG-fake0000-0000-0000-0000-000000000000", "MIG-fake0000-0000-0000-0000-000000000002",
		"MIG-fake0000-0000-0000-0000-000000000003", "GPU-fake0000-0000-0000-0000-000000000001"}
	if ids := CUDADeviceIDs(got); !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("CUDA_VISIBLE_DEVICES names %q, want %q", ids, wantIDs)
	}
}

func TestScanNVML_MIGModeWithoutInstances_Logged(t *testing.T) {
	t.Parallel()
	lib := &FakeNVML{GPUs: []FakeNVMLDevice{{UUIDv: "GPU-empty", NameV: "NVIDIA H100 80GB HBM3", Mem: 80 << 30,
		MIGOn: true, MIGSlots: make([]*FakeNVMLDevice, 7)}}}
	var logs bytes.Buffer
	got, err := ScanNVML(lib, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || len(got) != 0 {
		t.Fatalf("ScanNVML = %+v, %v; want no devices, no error", got, err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "GPU-empty") {
		t.Errorf("log %q does not warn about the MIG GPU without instances", logs.String())
	}
}

// failingMIGSlot is a MIG GPU whose slot 1 fails with something else
// than an empty slot: the scan must say so and leave that GPU out, not
// skip the slot nor fail the scan (whose fallback, nvidia-smi, would
// list the MIG-mode GPU whole).
type failingMIGSlot struct{ FakeNVMLDevice }

func (f failingMIGSlot) MIGDevice(i int) (NVMLDevice, error) {
	if i == 1 {
		return nil, errors.New("fake NVML: GPU is lost")
	}
	return f.FakeNVMLDevice.MIGDevice(i)
}

type oneDeviceNVML struct {
	*FakeNVML
	dev NVMLDevice
}

func (o oneDeviceNVML) DeviceCount() (int, error)      { return 1, nil }
func (o oneDeviceNVML) Device(int) (NVMLDevice, error) { return o.dev, nil }

func TestScanNVML_MIGSlotError(t *testing.T) {
	t.Parallel()
	lib := FakeNVMLMIG()
	var logs bytes.Buffer
	got, err := ScanNVML(oneDeviceNVML{&FakeNVML{}, failingMIGSlot{lib.GPUs[0]}}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("err = %v, want the GPU left out and the scan going on", err)
	}
	if len(got) != 0 {
		t.Errorf("devices = %+v, want none: a MIG GPU whose instances cannot be listed offers nothing", got)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "GPU is lost") || !strings.Contains(l, "MIG slot 1") {
		t.Errorf("log %q does not warn with the lost GPU's error naming MIG slot 1", l)
	}
}

// TestNewNVML_ThisMachine loads the real NVML. This machine has no
// NVIDIA driver: Init must say the library is missing (ErrNVMLMissing),
// which the inventory takes as "no NVIDIA GPUs", not as a failure.
func TestNewNVML_ThisMachine(t *testing.T) {
	t.Parallel()
	lib := NewNVML()
	err := lib.Init()
	if err == nil {
		n, _ := lib.DeviceCount()
		_ = lib.Shutdown()
		t.Skipf("this machine has NVML (%d devices): nothing missing to check", n)
	}
	if !errors.Is(err, ErrNVMLMissing) {
		t.Fatalf("Init = %v, want ErrNVMLMissing on a machine without libnvidia-ml", err)
	}
	t.Logf("Init: %v", err)
}

// TestScanNVML_MIGInstanceIDs: each MIG instance carries its GPU's minor
// (here 3, not its index 0) and its GPU and compute instance IDs, which
// name its capability nodes; an instance whose IDs NVML cannot give is
// still scheduled, with -1 for both, which leaves it bound by its
// environment only.
func TestScanNVML_MIGInstanceIDs(t *testing.T) {
	t.Parallel()
	lib := FakeNVMLMIG()
	gpu := lib.GPUs[0]
	gpu.MinorV = 3
	gpu.MIGSlots = []*FakeNVMLDevice{
		{UUIDv: "MIG-a", NameV: "m", GI: 2, CI: 1},
		{UUIDv: "MIG-b", NameV: "m", GI: -1},
	}
	got, err := ScanNVML(oneDeviceNVML{&FakeNVML{}, gpu}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	type ids struct{ minor, gi, ci int }
	var have []ids
	for _, d := range got {
		have = append(have, ids{d.Minor, d.GI, d.CI})
	}
	if want := []ids{{3, 2, 1}, {3, -1, -1}}; !reflect.DeepEqual(have, want) {
		t.Errorf("MIG instances' (minor, GI, CI) = %v, want %v", have, want)
	}
}
