package probe

import (
	"context"
	"errors"
)

// scanNVIDIA lists the node's NVIDIA devices through NVML; where NVML
// cannot be loaded (no driver, or a build without cgo) or does not start
// (driver not loaded, library and kernel module of different versions),
// through nvidia-smi, which knows no UUIDs or MIG instances but may still
// work where NVML's library is elsewhere than the loader looks. It logs
// one line saying which answered, or why none did; answered is whether
// one did, even with no device to schedule (a GPU in MIG mode without
// instances), so that sysfs does not list the card whole.
func scanNVIDIA(ctx context.Context, cfg StaticConfig) (devs []GPUDevice, answered bool) {
	nvmlErr := cfg.NVML.Init()
	if nvmlErr == nil {
		devs, err := ScanNVML(cfg.NVML, cfg.Logger)
		if serr := cfg.NVML.Shutdown(); serr != nil {
			cfg.Logger.Warn("NVML shutdown failed", "err", serr)
		}
		if err == nil {
			mig := 0
			for _, d := range devs {
				if d.MIG() {
					mig++
				}
			}
			cfg.Logger.Info("NVIDIA GPUs found through NVML", "devices", len(devs), "mig_instances", mig)
			return devs, true
		}
		nvmlErr = err
	}
	missing := errors.Is(nvmlErr, ErrNVMLMissing)
	if !missing {
		cfg.Logger.Warn("NVML failed; asking nvidia-smi, which lists no MIG instances", "err", nvmlErr)
	}
	devs, err := scanNvidiaSMI(ctx, cfg.Runner, cfg.NvidiaSMI)
	switch {
	case errors.Is(err, ErrToolMissing) && missing:
		// No NVIDIA driver stack: the common case, one line, no warning.
		cfg.Logger.Info("no NVIDIA GPUs: no NVIDIA driver here", "nvml", nvmlErr.Error(), "nvidia_smi", "not installed")
	case errors.Is(err, ErrToolMissing):
		cfg.Logger.Warn("nvidia-smi not installed either; NVIDIA GPUs not listed")
	case err != nil:
		cfg.Logger.Warn("nvidia-smi failed; NVIDIA GPUs not listed", "err", err)
	default:
		cfg.Logger.Info("NVIDIA GPUs found through nvidia-smi", "devices", len(devs), "nvml", nvmlErr.Error())
	}
	return devs, err == nil
}
