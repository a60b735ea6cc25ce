package jobrun

import (
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Key names one attempt of one job.
type Key struct {
	Job     uint64
	Attempt int
}

// procTable tracks the processes this node runs for jobs, and fences
// attempts: once a node has seen attempt k of a job it refuses anything
// older, so two live attempts of one job never run here at once.
type procTable struct {
	mu    sync.Mutex
	procs map[Key]map[int]*exec.Cmd // by pid
	seen  map[uint64]int            // highest attempt seen per job
	now   func() time.Time
}

func newProcTable(now func() time.Time) *procTable {
	return &procTable{procs: map[Key]map[int]*exec.Cmd{}, seen: map[uint64]int{}, now: now}
}

// fence records attempt k of job and fails if a newer one was seen.
func (t *procTable) fence(k Key) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.seen[k.Job]; k.Attempt < s {
		return fmt.Errorf("job %d attempt %d is stale: this node has seen attempt %d", k.Job, k.Attempt, s)
	}
	t.seen[k.Job] = k.Attempt
	return nil
}

func (t *procTable) add(k Key, c *exec.Cmd) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.procs[k] == nil {
		t.procs[k] = map[int]*exec.Cmd{}
	}
	t.procs[k][c.Process.Pid] = c
}

func (t *procTable) remove(k Key, pid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.procs[k], pid)
	if len(t.procs[k]) == 0 {
		delete(t.procs, k)
	}
}

// keys lists the attempts that have processes here.
func (t *procTable) keys() []Key {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Key, 0, len(t.procs))
	for k := range t.procs {
		out = append(out, k)
	}
	return out
}

// pids lists the processes of one attempt.
func (t *procTable) pids(k Key) []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int
	for pid := range t.procs[k] {
		out = append(out, pid)
	}
	return out
}

// kill ends every process group of an attempt: SIGTERM, then SIGKILL after
// grace for whatever is left.
func (t *procTable) kill(k Key, grace time.Duration) {
	pids := t.pids(k)
	for _, pid := range pids {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
	}
	if len(pids) == 0 {
		return
	}
	go func() {
		deadline := t.now().Add(grace)
		for t.now().Before(deadline) {
			alive := false
			for _, pid := range pids {
				if syscall.Kill(-pid, 0) == nil {
					alive = true
				}
			}
			if !alive {
				return
			}
			time.Sleep(50 * time.Millisecond) // polling the processes' exit
		}
		for _, pid := range pids {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
}
