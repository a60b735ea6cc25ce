// Package procstat reads the fields of /proc/PID/stat that the agent and the
// fence guard act on: a process's state, parent, process group and start time.
//
// The command name (field 2) is in parentheses and may itself hold spaces and
// parentheses (a job names its own processes), so the fields are counted from
// the last ')'. Everything here is read as untrusted input.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Stat is what shoal reads of /proc/PID/stat.
type Stat struct {
	// State is the one-letter state: T when stopped, Z a zombie.
	State byte
	// PPid is the parent's pid (field 4).
	PPid int
	// Pgrp is the process group the process is in (field 5).
	Pgrp int
	// Start is when the process started, in clock ticks since boot (field
	// 22): with the pid, it names one process for the life of the machine,
	// where the pid alone is reused once the process is gone.
	Start uint64
}

// Parse reads the contents of a /proc/PID/stat file.
func Parse(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("proc stat %.40q: no ')' closing the command name", b)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("proc stat: %d fields after the command name, want at least 20", len(f))
	}
	if len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("proc stat: state %q, want one letter", f[0])
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return Stat{}, fmt.Errorf("proc stat: parent: %w", err)
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return Stat{}, fmt.Errorf("proc stat: process group: %w", err)
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("proc stat: start time: %w", err)
	}
	return Stat{State: f[0][0], PPid: ppid, Pgrp: pgrp, Start: start}, nil
}

// Read reads /proc/PID/stat of pid.
func Read(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return Parse(b)
}
