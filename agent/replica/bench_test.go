package replica

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// BenchmarkFeedFanout1000: the cost of pushing one applied entry to 1,000
// followers' streams (in-process pipes, each read by its own goroutine):
// one op is one entry applied and read by all 1,000.
func BenchmarkFeedFanout1000(b *testing.B) {
	const followers = 1000
	s := newServer(b, "s0", 4096)
	log := script(b, 30, 0, 1+b.N)
	s.apply(log[0])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan uint64, followers)
	for range followers {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(s.feed.Serve(ctx, s.fsm, log[0].index, pw, nil)) }()
		go func() {
			br := bufio.NewReader(pr)
			for caughtUp := false; ; {
				fr, err := ReadFrame(br)
				if err != nil {
					return
				}
				if fr.Kind == KindEntry || (fr.Kind == KindHeartbeat && !caughtUp) {
					caughtUp = true
					got <- fr.Index
				}
			}
		}()
	}
	for range followers { // every stream's caught-up heartbeat
		<-got
	}
	b.ResetTimer()
	cpu := cpuTime()
	for _, e := range log[1:] {
		s.apply(e)
		for range followers {
			if i := <-got; i != e.index {
				b.Fatalf("read %d, want %d", i, e.index)
			}
		}
	}
	b.StopTimer()
	// The host is shared: CPU time says what the fan-out costs, wall time
	// what it took among the other loads.
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/followers, "ns/follower")
}

// jobs1000 is a state of 1,000 running jobs of 4 processes on 2 nodes
// each, among 100 nodes.
func jobs1000(b *testing.B) *raftfsm.FSM {
	fsm := raftfsm.New()
	var idx uint64
	apply := func(typ string, body any) {
		idx++
		data, err := raftfsm.Encode(typ, t0.Add(time.Duration(idx)*time.Millisecond), body)
		if err != nil {
			b.Fatal(err)
		}
		if r := fsm.Apply(&raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: data}).(raftfsm.Result); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	for j := uint64(1); j <= 1000; j++ {
		a, c := fmt.Sprintf("node%03d", j%100), fmt.Sprintf("node%03d", (j+1)%100)
		apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: fmt.Sprintf("req-%d", j), Owner: "alice",
			Spec: raftfsm.JobSpec{Cmd: []string{"./lammps", "-in", "in.lj"}, NP: 4, MaxAttempts: 3, Workdir: "/home/alice/run", Env: []string{"OMP_NUM_THREADS=1"}}})
		apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: j, Attempt: 1, Hosts: []raftfsm.Host{{Node: a, NP: 2}, {Node: c, NP: 2}}})
		apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: j, Attempt: 1, Node: a})
		apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: j, Attempt: 1, Node: c})
		apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: j, Attempt: 1})
	}
	return fsm
}

// BenchmarkFeedSnapshot1000Jobs: what a far-behind follower costs: the
// server encodes the state (encode), the follower restores it (restore).
func BenchmarkFeedSnapshot1000Jobs(b *testing.B) {
	fsm := jobs1000(b)
	data, _, err := fsm.SnapshotBytes()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			if _, _, err := fsm.SnapshotBytes(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(len(data)), "bytes")
	})
	b.Run("restore", func(b *testing.B) {
		copy := raftfsm.New()
		cpu := cpuTime()
		for b.Loop() {
			if err := copy.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(len(data)), "bytes")
	})
}

// cpuTime is the CPU time (user and system) the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
