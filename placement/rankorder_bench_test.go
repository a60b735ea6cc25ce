package placement

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRankOrder orders a group of every node of a 1,000-node
// cluster without known switches, where the chain runs over single nodes
// and reads every pair's cost:
//
//	go test -run '^$' -bench RankOrder -benchtime 20x -count 5 ./placement/
func BenchmarkRankOrder(b *testing.B) {
	snap := randCluster(rand.New(rand.NewPCG(1, 1000)), 1000, 1, 0)
	for i := range snap.Nodes {
		snap.Nodes[i].Switch = ""
	}
	idx, err := validateSnapshot(snap)
	if err != nil {
		b.Fatal(err)
	}
	p := newProblem(&snap, Request{N: 1000, WLT: 0.25, WBW: 0.75, Alpha: 0.3, Attr: &AttrWeights{M1: 1}}, idx)
	defer p.net.release()
	g, procs := make([]int, len(p.nodes)), make([]int, len(p.nodes))
	for i := range g {
		g[i], procs[i] = i, 1
	}
	b.ReportAllocs()
	c0 := processCPU()
	for b.Loop() {
		p.rankOrder(g, procs)
	}
	b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the process's user + system time so far: on a shared
// host it moves less with the load than the wall time, and it counts the
// garbage collector's work on every thread.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
