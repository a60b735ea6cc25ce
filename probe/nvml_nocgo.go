//go:build !(cgo && linux)

package probe

import "fmt"

// noNVML stands for NVML in a binary built without cgo, which cannot
// dlopen libnvidia-ml: Init says so, and the inventory asks nvidia-smi.
type noNVML struct{}

var _ NVML = noNVML{}

// NewNVML returns the node's NVML; in this build, one that never loads.
func NewNVML() NVML { return noNVML{} }

func (noNVML) Init() error {
	return fmt.Errorf("shoal was built without cgo, which loading libnvidia-ml needs: %w", ErrNVMLMissing)
}
func (noNVML) Shutdown() error                { return nil }
func (noNVML) DeviceCount() (int, error)      { return 0, nil }
func (noNVML) Device(int) (NVMLDevice, error) { return nil, ErrNVMLNotFound }
