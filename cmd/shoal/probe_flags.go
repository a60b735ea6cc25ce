package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent"
)

// probeFlags reads the agent's probe flags into cfg and points Bin at
// this executable, which the agent runs as `shoal probe KIND`.
func probeFlags(c *cli.Context, cfg *agent.Config) error {
	p := &cfg.Probes
	p.Port = c.Int("probe-port")
	p.LatencyInterval = c.Duration("latency-interval")
	p.BandwidthInterval = c.Duration("bandwidth-interval")
	p.BandwidthTimeout = c.Duration("bandwidth-timeout")
	var err error
	if p.BandwidthBytes, err = parseSize(c.String("bandwidth-bytes")); err != nil {
		return usagef(c, "--bandwidth-bytes: %v", err)
	}
	if p.Budget, err = parseSize(c.String("probe-budget")); err != nil {
		return usagef(c, "--probe-budget: %v", err)
	}
	if cfg.Bin == "" {
		if cfg.Bin, err = os.Executable(); err != nil {
			return cli.Exit(fmt.Sprintf("find this executable to start probes from: %v", err), exitFailure)
		}
	}
	return nil
}

// parseSize reads a byte count with an optional unit: B, KB/MB/GB (10^3)
// or KiB/MiB/GiB (2^10).
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size such as 4MiB or 500KB", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q; use B, KB, MB, GB, KiB, MiB or GiB", s, unit)
	}
	return uint64(math.Round(v * mult)), nil
}
