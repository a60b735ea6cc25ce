package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
)

// Static is the part of a node's state read once at start (seed 002 §4,
// NodeStateD's static attributes, plus the PE inventory of seed 001).
type Static struct {
	Hostname string  `json:"hostname"`
	CPUModel string  `json:"cpu_model"`
	Cores    int     `json:"cores"`   // physical cores
	Threads  int     `json:"threads"` // logical CPUs
	MHz      float64 `json:"mhz"`     // nominal (max) clock of one core
	MemTotal uint64  `json:"mem_total"`
	PEs      []PE    `json:"pes"`
}

// HostInventory reads the host facts of Static (everything but PEs). It
// is the boundary to gopsutil; GopsutilInventory is the real one.
type HostInventory interface {
	HostStatic(ctx context.Context) (Static, error)
}

// StaticConfig says where ScanStatic looks. The zero value of a field
// means its default; DefaultStaticConfig spells the defaults out.
type StaticConfig struct {
	// Host reads hostname, CPU and memory. Default: GopsutilInventory{}.
	Host HostInventory
	// Runner runs nvidia-smi. Default: ExecRunner{}.
	Runner Runner
	// NvidiaSMI is the nvidia-smi command name or path. Default "nvidia-smi".
	NvidiaSMI string
	// SysFS is a file system rooted at /sys for DRM scanning.
	// Default: os.DirFS("/sys").
	SysFS fs.FS
	// Declared are the --pe KIND=COUNT declarations (see ParsePEFlags).
	Declared []PE
	// Logger receives warnings about detection that failed but did not
	// stop the scan. Default: discard.
	Logger *slog.Logger
}

// DefaultStaticConfig scans the real machine.
func DefaultStaticConfig() StaticConfig {
	return StaticConfig{
		Host:      GopsutilInventory{},
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
// always, NVIDIA GPUs from nvidia-smi, other GPUs from sysfs, then the
// declared PEs (which replace detected ones of the same kind). Only a
// failure to read the host facts is an error; a GPU probe that fails is
// logged and skipped, because a node without its GPUs listed is still a
// useful CPU node.
func ScanStatic(ctx context.Context, cfg StaticConfig) (Static, error) {
	cfg = cfg.withDefaults()
	st, err := cfg.Host.HostStatic(ctx)
	if err != nil {
		return Static{}, fmt.Errorf("scan host: %w", err)
	}
	cpu := PE{Kind: "cpu", Model: st.CPUModel, Count: st.Cores, MemBytes: st.MemTotal}

	nv, err := ScanNvidia(ctx, cfg.Runner, cfg.NvidiaSMI)
	switch {
	case errors.Is(err, ErrToolMissing):
		// No NVIDIA driver stack: the common case, not worth a warning.
	case err != nil:
		cfg.Logger.Warn("nvidia-smi failed; NVIDIA GPUs not listed", "err", err)
	}
	cards, err := scanDRMCards(cfg.SysFS)
	if err != nil {
		cfg.Logger.Warn("sysfs DRM scan failed; AMD/Intel GPUs not listed", "err", err)
	}
	detected := append([]PE(nil), nv...)
	for _, c := range cards {
		// nvidia-smi knows model and memory; the same card seen in sysfs
		// would be counted twice.
		if c.vendor == pciVendorNVIDIA && len(nv) > 0 {
			continue
		}
		detected = append(detected, c.pe)
	}
	st.PEs = MergePEs(cpu, detected, cfg.Declared)
	return st, nil
}
