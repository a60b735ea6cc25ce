package jobrun

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/shoal-hpc/shoal/internal/procstat"
)

// launcherNames are MPI launchers and shoal itself: they catch SIGUSR1 for purposes of their
// own (Hydra forwards it to a checkpointing library), so the resize signal skips them and goes
// to the program's processes only.
var launcherNames = []string{"mpiexec", "mpirun", "hydra_", "orterun", "orted", "prte", "shoal"}

// signalResize sends SIGUSR1 to the processes of attempt k on this node that catch it (their
// SigCgt mask has it): the program's ranks, or a script that traps USR1. A process that does not
// catch SIGUSR1 would die of it, so it is left alone; so are the launchers. It returns how many
// processes were signalled, and is repeated every Deps.ResizeSignalEvery while the attempt runs, for a
// process that installs its handler late.
func (n *Node) signalResize(k Key) int {
	every := n.d.ResizeSignalEvery()
	n.mu.Lock()
	if t, ok := n.signalled[k]; ok && n.now().Sub(t) < every {
		n.mu.Unlock()
		return 0
	}
	n.signalled[k] = n.now()
	n.mu.Unlock()
	count := 0
	for _, pid := range descendants(n.procs.pids(k)) {
		if catchesUSR1(pid) && !isLauncher(pid) && syscall.Kill(pid, syscall.SIGUSR1) == nil {
			count++
		}
	}
	n.log.Info("asked the job's processes to checkpoint (SIGUSR1)", "job", k.Job, "attempt", k.Attempt, "processes", count)
	return count
}

// descendants returns roots and every process below them, from /proc.
func descendants(roots []int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil {
			continue
		}
		ppid := st.PPid
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}

// catchesUSR1 reads the process's caught-signals mask.
func catchesUSR1(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(syscall.SIGUSR1)-1)) != 0
		}
	}
	return false
}

func isLauncher(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return true
	}
	comm := strings.TrimSpace(string(b))
	for _, n := range launcherNames {
		if strings.HasPrefix(comm, n) {
			return true
		}
	}
	return false
}
