package raftfsm

import (
	"fmt"
	"slices"
	"time"
)

// HistoryRecord is what the state keeps of a finished job once purge_jobs has forgotten the job
// itself (Slurm's accounting record, `shoal history`): small and free of the job's environment,
// which often carries credentials.
type HistoryRecord struct {
	ID    uint64 `json:"id"`
	Owner string `json:"owner"`
	// Cmd is the command line, cut to MaxHistoryCmd bytes in all.
	Cmd []string `json:"cmd"`
	NP  int      `json:"np"`
	// Nodes are the nodes of the last attempt.
	Nodes    []string `json:"nodes,omitempty"`
	State    JobState `json:"state"`
	ExitCode *int     `json:"exit_code,omitempty"`
	// Reason is why the job failed or was killed, cut to MaxHistoryReason bytes.
	Reason      string    `json:"reason,omitempty"`
	Attempts    int       `json:"attempts"`
	SubmittedAt time.Time `json:"submitted_at"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	EndedAt     time.Time `json:"ended_at"`
	// Usage is what the job's processes used; nil when no node confined it.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is a job's measured resource use (cgroups): CPU seconds of every attempt, and the
// largest peak memory of one attempt (summed over its nodes).
type Usage struct {
	CPUSeconds  float64 `json:"cpu_seconds,omitempty"`
	MaxRSSBytes uint64  `json:"max_rss_bytes,omitempty"`
}

// Bounds of the history: records beyond MaxHistoryRecords drop the oldest (lowest job IDs) first, so
// the state stays bounded whatever the retention.
const (
	MaxHistoryRecords = 10000
	MaxHistoryCmd     = 512
	MaxHistoryReason  = 256
)

// PurgeHistory (purge_history) drops the history records of jobs that ended before Before: the
// leader proposes it for the records older than the history retention.
type PurgeHistory struct {
	Before time.Time `json:"before"`
}

// Record returns j's history record.
func Record(j *Job) HistoryRecord {
	r := HistoryRecord{ID: j.ID, Owner: j.Owner, NP: j.Spec.NP, State: j.State, ExitCode: clonePtr(j.ExitCode),
		Reason: cut(j.Reason, MaxHistoryReason), Attempts: j.Attempt, SubmittedAt: j.SubmittedAt, StartedAt: j.StartedAt, EndedAt: j.EndedAt}
	left := MaxHistoryCmd
	for _, a := range j.Spec.Cmd {
		if left <= 0 {
			r.Cmd = append(r.Cmd, "…")
			break
		}
		r.Cmd = append(r.Cmd, cut(a, left))
		left -= len(a)
	}
	if a := j.Current(); a != nil {
		for _, h := range a.Hosts {
			r.Nodes = append(r.Nodes, h.Node)
		}
	}
	// What every attempt used, as record_usage reported it (sacct's
	// TotalCPU, and the largest MaxRSS of any attempt).
	var used []NodeUsage
	for i := range j.Attempts {
		used = append(used, j.Attempts[i].Usage...)
	}
	if len(used) > 0 {
		t := UsageTotal(used)
		r.Usage = &Usage{CPUSeconds: t.CPUSeconds}
		for i := range j.Attempts {
			r.Usage.MaxRSSBytes = max(r.Usage.MaxRSSBytes, UsageTotal(j.Attempts[i].Usage).MaxRSSBytes)
		}
	}
	return r
}

// cut shortens s to at most n bytes, on a UTF-8 boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n-len("…"), 0)
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// addHistory inserts records in ID order and drops the oldest beyond MaxHistoryRecords.
//
// Records of jobs newer than every record held, the usual case (an array's tasks end in
// order), are appended in place; dropping the oldest reslices. Copying the whole history
// instead cost each ending task 10,000 records' copy once the history was full. A record
// that goes between others copies first: the slice is the state's own (State.Clone and
// snapshots copy it), but what is held is never changed in place.
func addHistory(h []HistoryRecord, recs []HistoryRecord) []HistoryRecord {
	out := h
	if len(h) > 0 && len(recs) > 0 && slices.MinFunc(recs, func(a, b HistoryRecord) int { return cmpID(a.ID, b.ID) }).ID <= h[len(h)-1].ID {
		out = slices.Clone(h)
	}
	for _, r := range recs {
		i, found := slices.BinarySearchFunc(out, r.ID, func(x HistoryRecord, id uint64) int { return cmpID(x.ID, id) })
		if found {
			out[i] = r
			continue
		}
		out = slices.Insert(out, i, r)
	}
	if len(out) > MaxHistoryRecords {
		out = out[len(out)-MaxHistoryRecords:]
	}
	return out
}

func cmpID(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *State) purgeHistory(_ time.Time, b *PurgeHistory) (Result, error) {
	if b.Before.IsZero() {
		return Result{}, fmt.Errorf("%w: purge_history needs a time before which records go", ErrInvalid)
	}
	kept := slices.DeleteFunc(slices.Clone(s.History), func(r HistoryRecord) bool { return r.EndedAt.Before(b.Before) })
	if len(kept) == len(s.History) {
		return Result{Noop: true}, nil
	}
	if len(kept) == 0 {
		kept = nil
	}
	s.History = kept
	return Result{}, nil
}

// HistoryExpired reports whether some record ended before before: whether purge_history would
// change anything.
func HistoryExpired(s *State, before time.Time) bool {
	return slices.ContainsFunc(s.History, func(r HistoryRecord) bool { return r.EndedAt.Before(before) })
}

// Finished reports whether s is a state a job never leaves (done, failed, killed): the jobs
// `shoal history` lists.
func (s JobState) Finished() bool { return s.finished() }
