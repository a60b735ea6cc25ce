package probe

import (
	"fmt"
	"strings"
)

// FakeNVML is an NVML with no driver behind it, for tests on machines
// without a GPU: it answers from the devices it holds. FakeNVMLTwoGPUs,
// FakeNVMLMIG, FakeNVMLInitFails and FakeNVMLMissing build the nodes the
// inventory's tests need.
type FakeNVML struct {
	// GPUs are the node's GPUs in NVML's order.
	GPUs []FakeNVMLDevice
	// InitErr, when set, is what Init returns.
	InitErr error
	// Inits and Shutdowns count the calls, so a test can check that
	// every Init is paired with a Shutdown.
	Inits, Shutdowns int
}

// FakeNVMLDevice is a GPU or MIG instance of a FakeNVML.
type FakeNVMLDevice struct {
	UUIDv, NameV string
	Mem          uint64 // bytes; 0 answers ErrNVMLNotSupported
	MinorV       int    // the /dev/nvidiaN number
	MIGOn        bool
	// GI and CI are a MIG instance's GPU and compute instance IDs; a
	// negative GI answers ErrNVMLNotSupported for both, as a whole GPU
	// does and a driver that cannot tell might.
	GI, CI int
	// MIGSlots are the MIG slots of a GPU in MIG mode, nil entries empty.
	MIGSlots []*FakeNVMLDevice
}

var (
	_ NVML       = (*FakeNVML)(nil)
	_ NVMLDevice = FakeNVMLDevice{}
)

// Init implements NVML.
func (f *FakeNVML) Init() error {
	f.Inits++
	return f.InitErr
}

// Shutdown implements NVML.
func (f *FakeNVML) Shutdown() error {
	f.Shutdowns++
	return nil
}

// DeviceCount implements NVML.
func (f *FakeNVML) DeviceCount() (int, error) { return len(f.GPUs), nil }

// Device implements NVML.
func (f *FakeNVML) Device(i int) (NVMLDevice, error) {
	if i < 0 || i >= len(f.GPUs) {
		return nil, fmt.Errorf("fake NVML device %d of %d: %w", i, len(f.GPUs), ErrNVMLNotFound)
	}
	return f.GPUs[i], nil
}

// UUID implements NVMLDevice.
func (d FakeNVMLDevice) UUID() (string, error) { return d.UUIDv, nil }

// Name implements NVMLDevice.
func (d FakeNVMLDevice) Name() (string, error) { return d.NameV, nil }

// MemoryTotal implements NVMLDevice.
func (d FakeNVMLDevice) MemoryTotal() (uint64, error) {
	if d.Mem == 0 {
		return 0, fmt.Errorf("fake NVML %s memory: %w", d.UUIDv, ErrNVMLNotSupported)
	}
	return d.Mem, nil
}

// MinorNumber implements NVMLDevice.
func (d FakeNVMLDevice) MinorNumber() (int, error) { return d.MinorV, nil }

// MIGEnabled implements NVMLDevice.
func (d FakeNVMLDevice) MIGEnabled() (bool, error) { return d.MIGOn, nil }

// MaxMIGDevices implements NVMLDevice.
func (d FakeNVMLDevice) MaxMIGDevices() (int, error) {
	if !d.MIGOn {
		return 0, fmt.Errorf("fake NVML %s is not in MIG mode: %w", d.UUIDv, ErrNVMLNotSupported)
	}
	return len(d.MIGSlots), nil
}

// MIGDevice implements NVMLDevice.
func (d FakeNVMLDevice) MIGDevice(i int) (NVMLDevice, error) {
	if i < 0 || i >= len(d.MIGSlots) || d.MIGSlots[i] == nil {
		return nil, fmt.Errorf("fake NVML %s MIG slot %d: %w", d.UUIDv, i, ErrNVMLNotFound)
	}
	return *d.MIGSlots[i], nil
}

// GPUInstanceID implements NVMLDevice.
func (d FakeNVMLDevice) GPUInstanceID() (int, error) {
	if d.GI < 0 || d.whole() {
		return 0, fmt.Errorf("fake NVML %s GPU instance: %w", d.UUIDv, ErrNVMLNotSupported)
	}
	return d.GI, nil
}

// ComputeInstanceID implements NVMLDevice.
func (d FakeNVMLDevice) ComputeInstanceID() (int, error) {
	if d.GI < 0 || d.whole() {
		return 0, fmt.Errorf("fake NVML %s compute instance: %w", d.UUIDv, ErrNVMLNotSupported)
	}
	return d.CI, nil
}

// whole reports whether d is a GPU rather than a MIG instance: a GPU
// has no instance IDs.
func (d FakeNVMLDevice) whole() bool { return strings.HasPrefix(d.UUIDv, "GPU-") }

// FakeNVMLTwoGPUs is a node of two whole A100s, /dev/nvidia0 and 1.
func FakeNVMLTwoGPUs() *FakeNVML {
	return &FakeNVML{GPUs: []FakeNVMLDevice{
		{UUIDv: "GPU-fake0000-0000-0000-0000-000000000000", NameV: "NVIDIA A100-SXM4-40GB", Mem: 40 << 30},
		{UUIDv: "GPU-fake0000-0000-0000-0000-000000000001", NameV: "NVIDIA A100-SXM4-40GB", Mem: 40 << 30, MinorV: 1},
	}}
}

// FakeNVMLMIG is a node of two A100s: GPU 0 in MIG mode with a 3g.20gb
// instance in slot 0 (GPU instance 1, compute instance 0), slot 1 empty
// (an instance destroyed) and two 1g.5gb instances in slots 2 and 3 (GPU
// instances 9 and 10), of seven slots; GPU 1 whole.
func FakeNVMLMIG() *FakeNVML {
	mig := func(n int, profile string, mem uint64, gi int) *FakeNVMLDevice {
		return &FakeNVMLDevice{UUIDv: fmt.Sprintf("MIG-fake0000-0000-0000-0000-00000000000%d", n),
			NameV: "NVIDIA A100-SXM4-40GB MIG " + profile, Mem: mem, GI: gi}
	}
	return &FakeNVML{GPUs: []FakeNVMLDevice{
		{UUIDv: "GPU-fake0000-0000-0000-0000-000000000000", NameV: "NVIDIA A100-SXM4-40GB", Mem: 40 << 30, MIGOn: true,
			MIGSlots: []*FakeNVMLDevice{mig(0, "3g.20gb", 20<<30, 1), nil, mig(2, "1g.5gb", 5<<30, 9), mig(3, "1g.5gb", 5<<30, 10), nil, nil, nil}},
		{UUIDv: "GPU-fake0000-0000-0000-0000-000000000001", NameV: "NVIDIA A100-SXM4-40GB", Mem: 40 << 30, MinorV: 1},
	}}
}

// FakeNVMLInitFails is a node whose libnvidia-ml loads but does not
// start, as when the kernel module is not loaded or of another version.
func FakeNVMLInitFails() *FakeNVML {
	return &FakeNVML{InitErr: fmt.Errorf("fake NVML: Driver/library version mismatch")}
}

// FakeNVMLMissing is a node without the NVIDIA driver: no libnvidia-ml.
func FakeNVMLMissing() *FakeNVML {
	return &FakeNVML{InitErr: fmt.Errorf("fake NVML: libnvidia-ml.so.1 not found: %w", ErrNVMLMissing)}
}
