package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

// parseJobSize reads -n/--np (N or MIN:MAX) and the elastic flags into sp. Every mistake
// is a usage error: nothing reaches the cluster.
func parseJobSize(c *cli.Context, sp *api.JobSpec) error {
	np, nodes := c.String("np"), c.String("nodes")
	elasticFlags := []string{"deadline", "budget", "iterations", "start", "comm-heavy", "checkpoint-dir"}
	rangeNP := strings.Contains(np, ":")
	if nodes == "" && !rangeNP {
		for _, f := range elasticFlags {
			if c.IsSet(f) {
				return usagef(c, "--%s is for elastic jobs: give --nodes MIN:MAX (or --np MIN:MAX)", f)
			}
		}
		n, err := strconv.Atoi(np)
		if np == "" || err != nil || n < 1 {
			if np == "" {
				np = "0"
			}
			return usagef(c, "-n/--np must be at least 1 (got %s)", np)
		}
		sp.NP = n
		return nil
	}
	if nodes != "" && np != "" {
		return usagef(c, "give --nodes MIN:MAX or -n/--np, not both")
	}
	unit := 1
	spec := np
	if nodes != "" {
		spec = nodes
		if sp.PPN == 0 {
			sp.PPN = 1
		}
		unit = sp.PPN
	}
	lo, hi, err := parseRange(spec)
	if err != nil {
		return usagef(c, "%v", err)
	}
	if nodes == "" && sp.PPN > 0 && (lo%sp.PPN != 0 || hi%sp.PPN != 0) {
		return usagef(c, "--np %s: MIN and MAX must be multiples of --ppn %d", np, sp.PPN)
	}
	if nodes == "" && sp.PPN > 0 {
		unit = sp.PPN
		lo, hi = lo/unit, hi/unit
	}
	start := lo
	if c.IsSet("start") {
		start = c.Int("start")
		if start < lo || start > hi {
			return usagef(c, "--start %d is outside %d:%d", start, lo, hi)
		}
	}
	e := &api.ElasticSpec{MinNP: lo * unit, MaxNP: hi * unit, Iterations: c.Int64("iterations"),
		BudgetNH: c.Float64("budget"), CommHeavy: c.Bool("comm-heavy"), CheckpointDir: c.String("checkpoint-dir")}
	if e.Iterations < 1 {
		return usagef(c, "an elastic job needs its total of iterations: --iterations N (N >= 1)")
	}
	hasDeadline, hasBudget := c.IsSet("deadline"), c.IsSet("budget")
	switch {
	case hasDeadline && hasBudget:
		return usagef(c, "give one constraint, --deadline or --budget, not both")
	case !hasDeadline && !hasBudget:
		return usagef(c, "an elastic job needs one constraint: --deadline DURATION or --budget NODE-HOURS")
	case hasBudget && !(e.BudgetNH > 0):
		return usagef(c, "--budget %v must be a positive number of node-hours", c.Float64("budget"))
	case hasDeadline:
		d, err := parseDeadline(c.String("deadline"), time.Now())
		if err != nil {
			return usagef(c, "--deadline %s: %v", c.String("deadline"), err)
		}
		e.Deadline = d
	}
	sp.NP, sp.Elastic = start*unit, e
	return nil
}

// parseRange reads MIN:MAX.
func parseRange(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, ":")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("%q: want MIN:MAX, e.g. 2:8", s)
	case lo < 1:
		return 0, 0, fmt.Errorf("%q: MIN must be at least 1", s)
	case lo > hi:
		return 0, 0, fmt.Errorf("%q: MIN %d is larger than MAX %d", s, lo, hi)
	}
	return lo, hi, nil
}

// parseDeadline reads a duration from now ("45m") or a time ("2026-11-22T18:00:00Z", "18:00"
// today) and returns the time left, which must be positive.
func parseDeadline(s string, now time.Time) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return 0, fmt.Errorf("must be a positive duration (e.g. 30m)")
		}
		return d, nil
	}
	var at time.Time
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		at = t
	} else if t, err := time.ParseInLocation("15:04", s, now.Location()); err == nil {
		at = time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
	} else {
		return 0, fmt.Errorf("want a duration (30m, 2h) or a time (RFC 3339, or 15:04 today)")
	}
	if !at.After(now) {
		return 0, fmt.Errorf("%s has already passed", at.Format(time.DateTime))
	}
	return at.Sub(now), nil
}
