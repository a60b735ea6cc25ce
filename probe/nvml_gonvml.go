//go:build cgo && linux

package probe

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// goNVML is the real NVML: github.com/NVIDIA/go-nvml, which loads
// libnvidia-ml.so.1 with dlopen when Init is called, so a binary built
// with it starts on a node without the driver and links no NVIDIA
// library. It needs cgo for the dlopen; a build without cgo gets
// nvml_nocgo.go's instead.
type goNVML struct{ lib nvml.Interface }

var (
	_ NVML       = goNVML{}
	_ NVMLDevice = goNVMLDevice{}
)

// NewNVML returns the node's NVML, loaded on Init.
func NewNVML() NVML { return goNVML{lib: nvml.New()} }

// nvmlErr turns an NVML return code into an error matching this
// package's sentinels where one applies, with NVML's own message.
func nvmlErr(ret nvml.Return) error {
	switch ret {
	case nvml.SUCCESS:
		return nil
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return fmt.Errorf("libnvidia-ml.so.1 not found: %w", ErrNVMLMissing)
	case nvml.ERROR_NOT_FOUND, nvml.ERROR_INVALID_ARGUMENT:
		// An empty MIG slot answers either, depending on the driver.
		return fmt.Errorf("%s: %w", nvml.ErrorString(ret), ErrNVMLNotFound)
	case nvml.ERROR_NOT_SUPPORTED:
		return fmt.Errorf("%s: %w", nvml.ErrorString(ret), ErrNVMLNotSupported)
	}
	return fmt.Errorf("NVML: %s", nvml.ErrorString(ret))
}

func (g goNVML) Init() error     { return nvmlErr(g.lib.Init()) }
func (g goNVML) Shutdown() error { return nvmlErr(g.lib.Shutdown()) }

func (g goNVML) DeviceCount() (int, error) {
	n, ret := g.lib.DeviceGetCount()
	return n, nvmlErr(ret)
}

func (g goNVML) Device(i int) (NVMLDevice, error) {
	d, ret := g.lib.DeviceGetHandleByIndex(i)
	if err := nvmlErr(ret); err != nil {
		return nil, err
	}
	return goNVMLDevice{d}, nil
}

type goNVMLDevice struct{ d nvml.Device }

func (g goNVMLDevice) UUID() (string, error) {
	s, ret := g.d.GetUUID()
	return s, nvmlErr(ret)
}

func (g goNVMLDevice) Name() (string, error) {
	s, ret := g.d.GetName()
	return s, nvmlErr(ret)
}

func (g goNVMLDevice) MemoryTotal() (uint64, error) {
	m, ret := g.d.GetMemoryInfo()
	if err := nvmlErr(ret); err != nil {
		return 0, err
	}
	return m.Total, nil
}

func (g goNVMLDevice) MinorNumber() (int, error) {
	n, ret := g.d.GetMinorNumber()
	return n, nvmlErr(ret)
}

func (g goNVMLDevice) MIGEnabled() (bool, error) {
	cur, _, ret := g.d.GetMigMode()
	if ret == nvml.ERROR_NOT_SUPPORTED {
		return false, nil // a GPU without MIG
	}
	if err := nvmlErr(ret); err != nil {
		return false, err
	}
	return cur == nvml.DEVICE_MIG_ENABLE, nil
}

func (g goNVMLDevice) MaxMIGDevices() (int, error) {
	n, ret := g.d.GetMaxMigDeviceCount()
	return n, nvmlErr(ret)
}

func (g goNVMLDevice) MIGDevice(i int) (NVMLDevice, error) {
	d, ret := g.d.GetMigDeviceHandleByIndex(i)
	if err := nvmlErr(ret); err != nil {
		return nil, err
	}
	return goNVMLDevice{d}, nil
}

func (g goNVMLDevice) GPUInstanceID() (int, error) {
	n, ret := g.d.GetGpuInstanceId()
	return n, nvmlErr(ret)
}

func (g goNVMLDevice) ComputeInstanceID() (int, error) {
	n, ret := g.d.GetComputeInstanceId()
	return n, nvmlErr(ret)
}
