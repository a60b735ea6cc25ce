package fence

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// procStat is what the guard needs of /proc/PID/stat.
type procStat struct {
	// State is the one-letter state: T when stopped, Z a zombie.
	State byte
	// Pgrp is the process group the process is in.
	Pgrp int
	// Start is when the process started, in clock ticks since boot: with
	// the pid, it names one process for the life of the machine, where
	// the pid alone is reused once the process is gone.
	Start uint64
}

// parseStat reads /proc/PID/stat's contents. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so the
// fields are counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("proc stat %.40q: no ')' closing the command name", b)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("proc stat: %d fields after the command name, want at least 20", len(f))
	}
	if len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("proc stat: state %q, want one letter", f[0])
	}
	pgrp, err := strconv.Atoi(string(f[2])) // field 5
	if err != nil {
		return procStat{}, fmt.Errorf("proc stat: process group: %w", err)
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64) // field 22
	if err != nil {
		return procStat{}, fmt.Errorf("proc stat: start time: %w", err)
	}
	return procStat{State: f[0][0], Pgrp: pgrp, Start: start}, nil
}

// readStat reads /proc/PID/stat of pid.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}
