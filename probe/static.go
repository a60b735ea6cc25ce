package probe

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/shoal-hpc/shoal/nodestate"
)

// Static is what a node's scan reads once at start: the inventory it
// gossips (nodestate.Static: host facts and PEs) and the node's own list
// of GPU devices, which jobs are bound to on this node and which nothing
// else reads.
type Static struct {
	nodestate.Static
	// GPUs are the node's schedulable GPUs, numbered 0.. in this order
	// (NVIDIA's in NVML's order, then AMD and Intel ones from sysfs);
	// nil where the operator's --pe gpu=N replaces what was detected.
	GPUs []GPUDevice
}

// HostInventory reads the host facts of Static (everything but PEs). It
// is the boundary to gopsutil; GopsutilInventory is the real one.
type HostInventory interface {
	HostStatic(ctx context.Context) (nodestate.Static, error)
}

// StaticConfig says where ScanStatic looks. The zero value of a field
// means its default; DefaultStaticConfig spells the defaults out.
type StaticConfig struct {
	// Host reads hostname, CPU and memory. Default: GopsutilInventory{}.
	Host HostInventory
	// NVML lists NVIDIA GPUs and their MIG instances. Default: NewNVML(),
	// which loads libnvidia-ml at scan time.
	NVML NVML
	// Runner runs nvidia-smi, asked where NVML cannot be loaded or
	// started. Default: ExecRunner{}.
	Runner Runner
	// NvidiaSMI is the nvidia-smi command name or path. Default "nvidia-smi".
	NvidiaSMI string
	// SysFS is a file system rooted at /sys for DRM scanning.
	// Default: os.DirFS("/sys").
	SysFS fs.FS
	// Declared are the --pe KIND=COUNT declarations (see ParsePEFlags).
	Declared []nodestate.PE
	// Logger receives warnings about detection that failed but did not
	// stop the scan. Default: discard.
	Logger *slog.Logger
}

// DefaultStaticConfig scans the real machine.
func DefaultStaticConfig() StaticConfig {
	return StaticConfig{
		Host:      GopsutilInventory{},
		NVML:      NewNVML(),
		Runner:    ExecRunner{},
		NvidiaSMI: "nvidia-smi",
		SysFS:     os.DirFS("/sys"),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func (c StaticConfig) withDefaults() StaticConfig {
	d := DefaultStaticConfig()
	if c.Host == nil {
		c.Host = d.Host
	}
	if c.NVML == nil {
		c.NVML = d.NVML
	}
	if c.Runner == nil {
		c.Runner = d.Runner
	}
	if c.NvidiaSMI == "" {
		c.NvidiaSMI = d.NvidiaSMI
	}
	if c.SysFS == nil {
		c.SysFS = d.SysFS
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

// ScanStatic reads the static node state and the PE inventory: the CPU PE
// always, NVIDIA GPUs through NVML (nvidia-smi where NVML cannot be
// loaded or started), other GPUs from sysfs, then the declared PEs (which
// replace detected ones of the same kind). Only a failure to read the host
// facts is an error; a GPU probe that fails is logged and skipped, because
// a node without its GPUs listed is still a useful CPU node.
func ScanStatic(ctx context.Context, cfg StaticConfig) (Static, error) {
	cfg = cfg.withDefaults()
	host, err := cfg.Host.HostStatic(ctx)
	st := Static{Static: host}
	if err != nil {
		return Static{}, fmt.Errorf("scan host: %w", err)
	}
	cpu := nodestate.PE{Kind: "cpu", Model: st.CPUModel, Count: st.Cores, MemBytes: st.MemTotal}

	gpus, nvidiaAnswered := scanNVIDIA(ctx, cfg)
	cards, err := scanDRMCards(cfg.SysFS)
	if err != nil {
		cfg.Logger.Warn("sysfs DRM scan failed; AMD/Intel GPUs not listed", "err", err)
	}
	for _, c := range cards {
		// NVML and nvidia-smi know model and memory; the same card seen
		// in sysfs would be counted twice, and a card they answered for
		// with nothing to schedule (MIG mode without instances) counted
		// whole.
		if c.vendor == pciVendorNVIDIA && (nvidiaAnswered || len(gpus) > 0) {
			continue
		}
		gpus = append(gpus, GPUDevice{Model: c.pe.Model, MemBytes: c.pe.MemBytes, Minor: -1, GI: -1, CI: -1, Source: "sysfs"})
	}
	st.PEs = MergePEs(cpu, gpuPEs(gpus), cfg.Declared)
	st.GPUs = gpus
	for _, d := range cfg.Declared {
		if d.Kind == "gpu" {
			st.GPUs = nil // the operator's count, not these devices
		}
	}
	return st, nil
}
