package raftfsm

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Confinement: a job's memory and CPU limits, enforced by each
// node's cgroup of the attempt, and what the attempt used there.

// MaxMemBytes bounds --mem and --mem-per-rank (1 PiB): far above any node,
// far below an overflow when multiplied by ranks.
const MaxMemBytes = 1 << 50

// maxCPUsPerRank bounds --cpus-per-rank.
const maxCPUsPerRank = 4096

func validateConfinement(s *JobSpec) error {
	switch {
	case s.MemPerNode > MaxMemBytes:
		return fmt.Errorf("%w: spec.mem_per_node = %d bytes, at most %d", ErrInvalid, s.MemPerNode, uint64(MaxMemBytes))
	case s.MemPerRank > MaxMemBytes:
		return fmt.Errorf("%w: spec.mem_per_rank = %d bytes, at most %d", ErrInvalid, s.MemPerRank, uint64(MaxMemBytes))
	case s.MemPerNode > 0 && s.MemPerRank > 0:
		return fmt.Errorf("%w: spec.mem_per_node and spec.mem_per_rank both set; give one (--mem or --mem-per-rank)", ErrInvalid)
	case s.CPUsPerRank < 0 || s.CPUsPerRank > maxCPUsPerRank:
		return fmt.Errorf("%w: spec.cpus_per_rank = %d, must be in [1,%d]", ErrInvalid, s.CPUsPerRank, maxCPUsPerRank)
	}
	return nil
}

// CPUs is the CPUs each rank gets (--cpus-per-rank, default 1).
func (s *JobSpec) CPUs() int { return max(1, s.CPUsPerRank) }

// HasMem reports whether the job asks for a memory limit.
func (s *JobSpec) HasMem() bool { return s.MemPerNode > 0 || s.MemPerRank > 0 }

// MemOn is the memory the job holds on a node running procs of its ranks:
// --mem as given, or --mem-per-rank × procs; 0 for no limit.
func (s *JobSpec) MemOn(procs int) uint64 {
	if s.MemPerNode > 0 {
		return s.MemPerNode
	}
	return s.MemPerRank * uint64(max(procs, 0))
}

// HeldMemory sums, per node, the memory that live jobs with a memory limit
// hold there: what placement counts against a node's memory.
func HeldMemory(st *State) map[string]uint64 {
	out := map[string]uint64{}
	for _, j := range st.Jobs {
		a := j.Current()
		if a == nil || !j.State.Live() || !j.Spec.HasMem() {
			continue
		}
		for _, h := range a.Hosts {
			out[h.Node] += j.Spec.MemOn(h.NP)
		}
	}
	return out
}

// NodeUsage is what one attempt used on one node, as its cgroup counted it
// (sacct's TotalCPU and MaxRSS per step and node).
type NodeUsage struct {
	Node          string  `json:"node"`
	UserSeconds   float64 `json:"user_s"`
	SystemSeconds float64 `json:"system_s"`
	// CPUSeconds is the total CPU time (user + system as the kernel sums it).
	CPUSeconds  float64 `json:"cpu_s"`
	MaxRSSBytes uint64  `json:"max_rss"`
	// Wall is from the start of the attempt's first process on the node
	// to the attempt's end there.
	Wall time.Duration `json:"wall,omitempty"`
	// MemLimit is the memory limit in force, 0 for none.
	MemLimit uint64 `json:"mem_limit,omitempty"`
	OOMKills uint64 `json:"oom_kills,omitempty"`
	// OOM is the reason an OOM kill gives the attempt ("out of memory on
	// NODE (limit X, peak Y)"); set with OOMKills.
	OOM string `json:"oom,omitempty"`
	// Final is false for a report made while the attempt still ran (an
	// OOM kill, reported at once); the node's report at the attempt's end
	// replaces it.
	Final bool `json:"final,omitempty"`
}

// RecordUsage (record_usage) records what an attempt used on a node. A
// node reports once at the end of its part of the attempt, and at once
// when the OOM killer ended one of its processes: an attempt with an OOM
// kill fails with the OOM's reason and is not retried, since another node
// would run out of memory as well.
type RecordUsage struct {
	ID      uint64    `json:"id"`
	Attempt int       `json:"attempt"`
	Usage   NodeUsage `json:"usage"`
}

func (s *State) recordUsage(at time.Time, b *RecordUsage) (Result, error) {
	u := b.Usage
	if err := nonEmpty("usage.node", u.Node); err != nil {
		return Result{JobID: b.ID}, err
	}
	if err := checkLen("usage.oom", u.OOM); err != nil {
		return Result{JobID: b.ID}, err
	}
	for _, f := range []float64{u.UserSeconds, u.SystemSeconds, u.CPUSeconds} {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return Result{JobID: b.ID}, fmt.Errorf("%w: usage CPU seconds must be finite and >= 0", ErrInvalid)
		}
	}
	if u.Wall < 0 || (u.OOMKills > 0) != (u.OOM != "") {
		return Result{JobID: b.ID}, fmt.Errorf("%w: usage wall must be >= 0, and oom given exactly with oom_kills", ErrInvalid)
	}
	j, err := s.job(b.ID)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: j.ID, Attempt: j.Attempt}
	if b.Attempt < 1 || b.Attempt > len(j.Attempts) {
		return res, fmt.Errorf("%w: job %d has no attempt %d", ErrInvalid, j.ID, b.Attempt)
	}
	a := &j.Attempts[b.Attempt-1]
	if !a.Holds(u.Node) {
		return res, fmt.Errorf("%w: job %d attempt %d does not hold node %q", ErrInvalid, j.ID, b.Attempt, u.Node)
	}
	i, found := slices.BinarySearchFunc(a.Usage, u.Node, func(x NodeUsage, n string) int {
		switch {
		case x.Node < n:
			return -1
		case x.Node > n:
			return 1
		}
		return 0
	})
	if found && a.Usage[i] == u {
		res.Noop = true
		return res, nil
	}
	if found && a.Usage[i].Final && !u.Final {
		res.Noop = true // a running report overtaken by the final one
		return res, nil
	}
	n := j.clone()
	na := &n.Attempts[b.Attempt-1]
	if found {
		na.Usage[i] = u
	} else {
		na.Usage = slices.Insert(na.Usage, i, u)
	}
	if u.OOM != "" && b.Attempt == n.Attempt {
		oomFails(n, na, u.OOM, at)
	}
	s.setJob(n)
	return res, nil
}

// oomFails makes an attempt that ended with an OOM kill fail with the OOM's
// reason, and its job with it: a job requeued because the OOM looked like a
// lost node is failed rather than run again. A live attempt is left to end:
// finish_attempt and fail_attempt then see the OOM (attemptOOM).
func oomFails(j *Job, a *Attempt, reason string, at time.Time) {
	if !a.Ended() || a.State != StateFailed {
		return
	}
	a.Reason = reason
	switch j.State {
	case StateFailed:
		j.Reason = reason
	case StateQueued:
		j.State, j.Reason, j.EndedAt = StateFailed, reason, at
		j.WaitReason, j.WaitSince = "", time.Time{}
	}
}

// attemptOOM is the OOM reason a node reported for a, or "".
func attemptOOM(a *Attempt) string {
	for _, u := range a.Usage {
		if u.OOM != "" {
			return u.OOM
		}
	}
	return ""
}

// UsageTotal sums an attempt's usage over its nodes: wall is the longest.
func UsageTotal(us []NodeUsage) NodeUsage {
	var t NodeUsage
	for _, u := range us {
		t.UserSeconds += u.UserSeconds
		t.SystemSeconds += u.SystemSeconds
		t.CPUSeconds += u.CPUSeconds
		t.MaxRSSBytes += u.MaxRSSBytes
		t.Wall = max(t.Wall, u.Wall)
		t.OOMKills += u.OOMKills
	}
	return t
}
