package raftfsm

import (
	"fmt"
	"testing"
	"time"
)

// The cost per task of the commands of an array's task with many tasks
// queued behind it, and of what a node reads per round. Run with
//
//	go test -run '^$' -bench 'Queued' -benchtime 2000x ./raftfsm/
//
// A cost that grows with the queue is paid per task: at 100,000 queued
// tasks, an O(n) step of 1 ms is 100 s of a 100,000-task array.

var queuedSizes = []int{1000, 10000, 100000}

// queuedState is a state holding n queued one-process tasks of arrays of
// at most MaxArrayTasks, with the default per-user limits but none on
// queued jobs, and the next request number.
func queuedState(b *testing.B, n int) (*State, int) {
	b.Helper()
	s := NewState()
	s.Limits = DefaultLimits()
	s.Limits.QueuedJobs, s.Limits.Procs = 0, 0
	req := 0
	for n > 0 {
		k := min(n, MaxArrayTasks)
		req = submitArray(b, s, req, k)
		n -= k
	}
	return s, req
}

func submitArray(b *testing.B, s *State, req, tasks int) int {
	b.Helper()
	a := &ArraySpec{Tasks: make([]int, tasks)}
	for i := range a.Tasks {
		a.Tasks[i] = i
	}
	req++
	if r := s.Apply(benchCmd(b, CmdSubmitJob, SubmitJob{RequestID: fmt.Sprint("array-", req), Owner: "alice",
		Spec: JobSpec{Cmd: []string{"true"}, NP: 1, Array: a}})); r.Err != nil {
		b.Fatal(r.Err)
	}
	return req
}

func benchCmd(b *testing.B, typ string, body any) Command {
	b.Helper()
	data, err := Encode(typ, t0, body)
	if err != nil {
		b.Fatal(err)
	}
	c, err := Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkTaskLifeQueued applies one task's place_job, ack_reservation,
// start_job and finish_attempt (decoded beforehand) with n tasks queued.
func BenchmarkTaskLifeQueued(b *testing.B) {
	for _, n := range queuedSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, req := queuedState(b, n)
			q := Queue(s)
			zero := 0
			b.ResetTimer()
			for i := range b.N {
				if i > 0 && i%n == 0 { // the queue ran dry: fill it again
					b.StopTimer()
					for k := n; k > 0; k -= MaxArrayTasks {
						req = submitArray(b, s, req, min(k, MaxArrayTasks))
					}
					q = Queue(s)
					b.StartTimer()
				}
				id := q[i%n].ID
				b.StopTimer()
				cmds := []Command{
					benchCmd(b, CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 1}}}),
					benchCmd(b, CmdAckReservation, AckReservation{ID: id, Attempt: 1, Node: "n1"}),
					benchCmd(b, CmdStartJob, StartJob{ID: id, Attempt: 1}),
					benchCmd(b, CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 1, ExitCode: &zero}),
				}
				b.StartTimer()
				for _, c := range cmds {
					if r := s.Apply(c); r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
		})
	}
}

// BenchmarkQueueRoundQueued is what every scheduling round reads: the
// queue in fair-share order.
func BenchmarkQueueRoundQueued(b *testing.B) {
	for _, n := range queuedSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _ := queuedState(b, n)
			now := t0.Add(time.Hour)
			b.ResetTimer()
			for range b.N {
				if len(FairQueue(s, now, time.Hour)) != n {
					b.Fatal("queue lost tasks")
				}
			}
		})
	}
}

// BenchmarkSharedQueued is the copy the leader's scheduling round reads.
func BenchmarkSharedQueued(b *testing.B) {
	for _, n := range queuedSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _ := queuedState(b, n)
			b.ResetTimer()
			for range b.N {
				if len(s.Shared().Jobs) != n {
					b.Fatal("copy lost tasks")
				}
			}
		})
	}
}

// BenchmarkCloneQueued is a deep copy of the state, which the leader's
// scheduling round and every node's reconciler took on every applied entry.
func BenchmarkCloneQueued(b *testing.B) {
	for _, n := range queuedSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _ := queuedState(b, n)
			b.ResetTimer()
			for range b.N {
				if len(s.Clone().Jobs) != n {
					b.Fatal("clone lost tasks")
				}
			}
		})
	}
}
