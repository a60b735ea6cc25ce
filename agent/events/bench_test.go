package events

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// BenchmarkLookJobs is one look of the agent's event pump at 10,000 jobs
// of which one changed: a mark per job and a diff per job.
//
//	go test -run '^$' -bench LookJobs ./agent/events
func BenchmarkLookJobs(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	jobs := make([]*raftfsm.Job, 10_000)
	marks := make(map[uint64]JobMark, len(jobs))
	for i := range jobs {
		j := &raftfsm.Job{ID: uint64(i + 1), State: raftfsm.StateDone, Attempt: 1, Attempts: []raftfsm.Attempt{
			{N: 1, State: raftfsm.StateDone, StartedAt: now, EndedAt: now}}}
		jobs[i] = j
		marks[j.ID] = MarkJob(j)
	}
	// The first job was running at the last look and has ended since.
	jobs[0].State, jobs[0].Attempts[0].State = raftfsm.StateRunning, raftfsm.StateRunning
	marks[1] = MarkJob(jobs[0])
	jobs[0].State, jobs[0].Attempts[0].State = raftfsm.StateDone, raftfsm.StateDone
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		for _, j := range jobs {
			prev := marks[j.ID]
			if Settled(prev, j) {
				continue
			}
			m := MarkJob(j)
			n += len(DiffJob(&prev, &m))
		}
		if n != 2 {
			b.Fatalf("%d changes, want 2", n)
		}
	}
}

// BenchmarkRingStream is one event published to a ring of 4096 and read
// by 100 streams.
func BenchmarkRingStream(b *testing.B) {
	r := NewRing(DefaultRingSize)
	r.Start(0)
	curs := make([]Cursor, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.Publish(Event{Index: uint64(i + 1), Topic: TopicJob, Type: "updated", Key: fmt.Sprint(i)})
		for k := range curs {
			evs, next, ok := r.Next(curs[k], func(Event) bool { return true })
			if !ok || len(evs) != 1 {
				b.Fatalf("stream %d: %d events, ok %v", k, len(evs), ok)
			}
			curs[k] = next
		}
	}
}
