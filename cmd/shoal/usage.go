package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/confine"
)

// limitsString is a job's confinement in `shoal job`: its
// memory limit and CPUs per process.
func limitsString(sp api.JobSpec) string {
	var parts []string
	switch {
	case sp.MemPerNode > 0:
		parts = append(parts, "memory "+confine.FormatSize(sp.MemPerNode)+" per node")
	case sp.MemPerRank > 0:
		parts = append(parts, "memory "+confine.FormatSize(sp.MemPerRank)+" per process")
	}
	if sp.CPUsPerRank > 1 || len(parts) > 0 {
		parts = append(parts, fmt.Sprintf("%d CPU(s) per process", max(sp.CPUsPerRank, 1)))
	}
	return strings.Join(parts, ", ")
}

// writeUsage adds an attempt's usage, per node and in total, under its
// line in `shoal job` (sacct's TotalCPU and MaxRSS).
func writeUsage(w io.Writer, a api.Attempt) {
	if len(a.Usage) == 0 {
		return
	}
	line := func(name string, u api.NodeUsage) {
		s := fmt.Sprintf("      %-12s cpu %.2fs (user %.2fs, system %.2fs), max rss %s, wall %.1fs",
			name, u.CPUSeconds, u.UserSeconds, u.SystemSeconds, confine.FormatSize(u.MaxRSSBytes), u.WallSeconds)
		if u.OOMKills > 0 {
			s += fmt.Sprintf(", %d OOM kill(s)", u.OOMKills)
		}
		fmt.Fprintln(w, safe(s))
	}
	for _, u := range a.Usage {
		line(u.Node, u)
	}
	if a.Total != nil && len(a.Usage) > 1 {
		line("total", *a.Total)
	}
}
