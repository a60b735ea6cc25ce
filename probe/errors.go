package probe

import "errors"

// Sentinel errors of the package. Callers test them with errors.Is; the
// messages returned by the functions wrap them with the offending input.
var (
	// ErrNotELF means a job's executable is not an ELF file (for example a
	// shell script), so its libraries cannot be read.
	ErrNotELF = errors.New("not an ELF file")

	// ErrBadPEFlag means a --pe KIND=COUNT declaration could not be parsed.
	ErrBadPEFlag = errors.New("bad --pe flag")

	// ErrNvidiaSMI means nvidia-smi ran but its output could not be parsed.
	ErrNvidiaSMI = errors.New("bad nvidia-smi output")

	// ErrToolMissing means an external tool (nvidia-smi) is not installed;
	// it is the normal case on a machine without NVIDIA GPUs.
	ErrToolMissing = errors.New("tool not installed")
)

// Errors of the NVML boundary (NVML, NVMLDevice), which implementations
// wrap with the library's own message.
var (
	// ErrNVMLMissing means NVML cannot be loaded: no libnvidia-ml on the
	// node, or a shoal built without cgo, which cannot load it.
	ErrNVMLMissing = errors.New("NVML library not loadable")

	// ErrNVMLNotFound means a MIG slot holds no instance.
	ErrNVMLNotFound = errors.New("no such NVML device")

	// ErrNVMLNotSupported means the device does not support the query.
	ErrNVMLNotSupported = errors.New("not supported by the device")
)
