package probe

// NVML is what the GPU inventory needs from NVIDIA's management library
// (libnvidia-ml, the library nvidia-smi itself reads): the devices, their
// UUIDs, names and memory, and the MIG instances of a GPU in MIG mode.
// It is the boundary between the inventory and the driver: NewNVML is the
// real one over github.com/NVIDIA/go-nvml, FakeNVML the one tests use on
// machines without a GPU. Methods are called from one goroutine, between
// Init and Shutdown.
type NVML interface {
	// Init loads and initialises the library. It returns an error
	// matching ErrNVMLMissing when there is no library to load (no
	// NVIDIA driver on the node, or a binary built without cgo), and any
	// other error when the library is there but does not start (driver
	// not loaded, library and kernel module of different versions).
	Init() error
	// Shutdown releases what Init took.
	Shutdown() error
	// DeviceCount is the number of GPUs, MIG instances not counted.
	DeviceCount() (int, error)
	// Device is GPU i of DeviceCount, in NVML's order: PCI bus order,
	// as nvidia-smi numbers them and CUDA with CUDA_DEVICE_ORDER=PCI_BUS_ID.
	Device(i int) (NVMLDevice, error)
}

// NVMLDevice is one GPU or one MIG instance of a GPU.
type NVMLDevice interface {
	// UUID is "GPU-..." for a GPU, "MIG-..." for a MIG instance: the
	// names CUDA_VISIBLE_DEVICES takes.
	UUID() (string, error)
	// Name is the model, "NVIDIA A100-SXM4-40GB" or, for a MIG
	// instance, "NVIDIA A100-SXM4-40GB MIG 1g.5gb".
	Name() (string, error)
	// MemoryTotal is the device's memory in bytes; ErrNVMLNotSupported
	// where the device has none of its own (integrated GPUs).
	MemoryTotal() (uint64, error)
	// MinorNumber is the GPU's /dev/nvidiaN number, which need not be
	// its index; a MIG instance answers its GPU's or ErrNVMLNotSupported.
	MinorNumber() (int, error)
	// MIGEnabled reports whether the GPU is in MIG mode now (not once
	// reset); false, not an error, for GPUs without MIG.
	MIGEnabled() (bool, error)
	// MaxMIGDevices is how many MIG instances the GPU can hold: the
	// bound of MIGDevice's index, not how many exist.
	MaxMIGDevices() (int, error)
	// MIGDevice is MIG slot i of a GPU in MIG mode; ErrNVMLNotFound for
	// a slot that holds no instance.
	MIGDevice(i int) (NVMLDevice, error)
	// GPUInstanceID and ComputeInstanceID are a MIG instance's GPU
	// instance and compute instance IDs on its GPU, the names of its
	// capabilities in the driver's table (gpuN/giG/ciC/access);
	// ErrNVMLNotSupported for a whole GPU.
	GPUInstanceID() (int, error)
	ComputeInstanceID() (int, error)
}
