package placement_test

import (
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

func TestNextJob(t *testing.T) {
	t.Parallel()
	gpuNode := placement.Node{Name: "g", Alive: true, PEs: []nodestate.PE{{Kind: "cpu", Count: 8}, {Kind: "gpu", Count: 2}}}
	cpuNode := placement.Node{Name: "c", Alive: true, PEs: []nodestate.PE{{Kind: "cpu", Count: 8}}}
	cpu := func(id, seq uint64) placement.QueuedJob { return placement.QueuedJob{ID: id, Seq: seq} }
	gpu := func(id, seq uint64) placement.QueuedJob { return placement.QueuedJob{ID: id, Seq: seq, NeedsPE: "gpu"} }
	for _, tc := range []struct {
		name  string
		queue []placement.QueuedJob
		node  placement.Node
		want  uint64 // job ID; 0 = none
	}{
		{"empty", nil, cpuNode, 0},
		{"fcfs", []placement.QueuedJob{cpu(2, 2), cpu(1, 1)}, cpuNode, 1},
		{"priority before fcfs", []placement.QueuedJob{cpu(1, 1), {ID: 2, Seq: 2, Priority: 5}}, cpuNode, 2},
		{"cpu node passes gpu jobs", []placement.QueuedJob{gpu(1, 1), gpu(2, 2), cpu(3, 3)}, cpuNode, 3},
		{"cpu node, only gpu jobs", []placement.QueuedJob{gpu(1, 1)}, cpuNode, 0},
		{"gpu node looks past 3 cpu jobs", []placement.QueuedJob{cpu(1, 1), cpu(2, 2), cpu(3, 3), gpu(4, 4)}, gpuNode, 4},
		{"but not past 4", []placement.QueuedJob{cpu(1, 1), cpu(2, 2), cpu(3, 3), cpu(4, 4), gpu(5, 5)}, gpuNode, 1},
		{"no gpu job: first cpu job", []placement.QueuedJob{cpu(1, 1), cpu(2, 2)}, gpuNode, 1},
		{"gpu job first", []placement.QueuedJob{gpu(1, 1), cpu(2, 2)}, gpuNode, 1},
		{"fpga job skipped on gpu node", []placement.QueuedJob{{ID: 1, Seq: 1, NeedsPE: "fpga"}, cpu(2, 2)}, gpuNode, 2},
		{"dead node", []placement.QueuedJob{cpu(1, 1)}, placement.Node{Name: "d"}, 0},
	} {
		idx, ok := placement.NextJob(tc.queue, tc.node)
		var got uint64
		if ok {
			got = tc.queue[idx].ID
		}
		if got != tc.want {
			t.Errorf("%s: got job %d (ok %v), want %d", tc.name, got, ok, tc.want)
		}
	}
}
