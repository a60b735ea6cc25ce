package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// tcpSegs is the TCP segments each process has sent, by socket (local
// and remote address), read from the kernel's socket statistics through
// ss. UDP is not in it: memberlist's probes and gossip go over UDP, and
// the kernel keeps no per-socket packet count for them.
type tcpSegs map[int]map[string]uint64

// readTCPSegs runs ss over the established TCP sockets of the machine.
// It needs root to see other users' processes; the benchmarks' agents
// are the caller's own.
func readTCPSegs() (tcpSegs, error) {
	out, err := exec.Command("ss", "-tinpH", "state", "established").Output()
	if err != nil {
		return nil, fmt.Errorf("ss: %w (is iproute2 installed?)", err)
	}
	return parseSS(strings.NewReader(string(out)))
}

// parseSS reads `ss -tinpH state established`: a line naming a socket
// (queues, local, remote, users:((name,pid=N,fd=M))) and an indented line
// of its TCP info, which holds segs_out:N. Sockets without a process (a
// connection another namespace or a closed process left) are skipped.
func parseSS(r io.Reader) (tcpSegs, error) {
	segs := tcpSegs{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var key string
	var pids []int
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, " ") {
			f := strings.Fields(line)
			key, pids = "", nil
			if len(f) < 4 {
				continue
			}
			key = f[2] + " " + f[3]
			// A socket shared by several processes (a forked child's
			// inherited descriptor) names each; its segments count once,
			// for the first.
			for _, p := range strings.Split(strings.Join(f[4:], " "), "pid=")[1:] {
				end := strings.IndexAny(p, ",)")
				if end < 0 {
					continue
				}
				if pid, err := strconv.Atoi(p[:end]); err == nil {
					pids = append(pids, pid)
					break
				}
			}
			continue
		}
		if key == "" || len(pids) == 0 {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "segs_out:"); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("ss: segs_out %q is not a count", v)
				}
				if segs[pids[0]] == nil {
					segs[pids[0]] = map[string]uint64{}
				}
				segs[pids[0]][key] = n
			}
		}
		key = ""
	}
	return segs, sc.Err()
}

// sentSince is how many segments pid sent between before and s: the
// growth of each socket both saw, and all of a socket opened since. A
// socket closed in between loses what it sent after before.
func (s tcpSegs) sentSince(before tcpSegs, pid int) uint64 {
	var n uint64
	for k, v := range s[pid] {
		if b, ok := before[pid][k]; ok && b <= v {
			n += v - b
		} else if !ok {
			n += v
		}
	}
	return n
}
