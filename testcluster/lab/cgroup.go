package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// cgroups are the per-node CPU cgroups of hog nodes (see Options.ConfineHogs).
type cgroups struct {
	root  string            // the lab's own cgroup directory
	nodes map[string]string // node -> its cgroup directory
	procs string            // file name to write a pid into: cgroup.procs
}

// cgroupV1CPU and cgroupV2 are where the CPU controller is mounted.
const (
	cgroupV1CPU = "/sys/fs/cgroup/cpu"
	cgroupV2    = "/sys/fs/cgroup"
)

// confineHogs moves every hog into a cgroup per hog node with a CPU quota
// of pct percent of one core, at nice 0: the hogs then load their own node
// (and the ranks the launcher script puts beside them), not the machine.
func confineHogs(tb *netns.Testbed, pct int) (*cgroups, error) {
	cg := &cgroups{nodes: map[string]string{}, procs: "cgroup.procs"}
	v2 := false
	if _, err := os.Stat(filepath.Join(cgroupV2, "cgroup.controllers")); err == nil {
		v2 = true
		cg.root = filepath.Join(cgroupV2, "shoal-lab-"+tb.Prefix())
	} else if _, err := os.Stat(filepath.Join(cgroupV1CPU, "cpu.cfs_quota_us")); err == nil {
		cg.root = filepath.Join(cgroupV1CPU, "shoal-lab-"+tb.Prefix())
	} else {
		return nil, errors.New("confine hogs: no cgroup CPU controller at " + cgroupV1CPU + " or " + cgroupV2)
	}
	if err := os.Mkdir(cg.root, 0o755); err != nil {
		return nil, fmt.Errorf("confine hogs: %w", err)
	}
	if v2 {
		_ = os.WriteFile(filepath.Join(cgroupV2, "cgroup.subtree_control"), []byte("+cpu"), 0o644)
		if err := os.WriteFile(filepath.Join(cg.root, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
			_ = cg.remove()
			return nil, fmt.Errorf("confine hogs: enable cpu controller: %w", err)
		}
	}
	quota := pct * 1000 // of a 100ms period
	for _, p := range tb.Processes() {
		// netns starts each hog as `nice -n N sh -c 'while :; do :; done'`;
		// its log file is named after argv[0].
		if !strings.HasSuffix(p.LogPath(), "-nice.log") {
			continue
		}
		node := p.Node()
		dir, ok := cg.nodes[node]
		if !ok {
			dir = filepath.Join(cg.root, node)
			if err := os.Mkdir(dir, 0o755); err != nil {
				_ = cg.remove()
				return nil, fmt.Errorf("confine hogs: %w", err)
			}
			var err error
			if v2 {
				err = os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d 100000", quota)), 0o644)
			} else {
				err = os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte("100000"), 0o644)
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(strconv.Itoa(quota)), 0o644)
				}
			}
			if err != nil {
				_ = cg.remove()
				return nil, fmt.Errorf("confine hogs on %s: set quota: %w", node, err)
			}
			cg.nodes[node] = dir
		}
		if err := os.WriteFile(filepath.Join(dir, cg.procs), []byte(strconv.Itoa(p.Pid())), 0o644); err != nil {
			_ = cg.remove()
			return nil, fmt.Errorf("confine hog %d on %s: %w", p.Pid(), node, err)
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, p.Pid(), 0); err != nil {
			_ = cg.remove()
			return nil, fmt.Errorf("renice hog %d on %s: %w", p.Pid(), node, err)
		}
	}
	return cg, nil
}

// ProcsFile is the file into which a pid is written to put it in node's
// hog cgroup; "" when node has none.
func (l *Lab) ProcsFile(node string) string {
	if l.cg == nil || l.cg.nodes[node] == "" {
		return ""
	}
	return filepath.Join(l.cg.nodes[node], l.cg.procs)
}

// remove deletes the cgroups once their processes are gone (the testbed
// has killed them; a killed process leaves its cgroup a moment later).
func (cg *cgroups) remove() error {
	dirs := make([]string, 0, len(cg.nodes)+1)
	for _, d := range cg.nodes {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, cg.root)
	deadline := time.Now().Add(10 * time.Second)
	for _, d := range dirs {
		for {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("remove cgroup %s: %w", d, err)
			}
			time.Sleep(50 * time.Millisecond) // cgroup removal has no event to wait on
		}
	}
	return nil
}
