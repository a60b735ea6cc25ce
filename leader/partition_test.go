package leader

import (
	"testing"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestSchedule_Partition: a job of a partition is placed on the
// partition's nodes only, and waits when they are full rather than
// spilling onto the others; a job of no partition may use every node.
func TestSchedule_Partition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		spec    raftfsm.JobSpec
		want    []string
		wantNot []string
	}{
		{name: "on the partition's nodes", spec: raftfsm.JobSpec{NP: 8, PPN: 4, MPI: "none", Partition: "small"},
			want: []string{`place_job {"id":1,"attempt":1,"hosts":[{"node":"n2","procs":4},{"node":"n3","procs":4}]}`}},
		{name: "waits when its nodes cannot hold it", spec: raftfsm.JobSpec{NP: 12, PPN: 4, MPI: "none", Partition: "small"},
			want: []string{`set_wait_reason {"id":1,`}, wantNot: []string{"place_job"}},
		{name: "no partition: every node", spec: raftfsm.JobSpec{NP: 12, PPN: 4, MPI: "none"},
			want: []string{`place_job {"id":1,"attempt":1,`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "n1", "n2", "n3")
			w.do(raftfsm.CmdSetPartition, raftfsm.SetPartition{User: "root", Partition: raftfsm.Partition{Name: "small", Nodes: []string{"n2", "n3"}}})
			submit(w, "a", tc.spec)
			cmds, _ := Schedule(w.view(), JobsBook{})
			wantCommands(t, cmds, tc.want)
			for _, no := range tc.wantNot {
				if contains(commands(cmds), no) {
					t.Errorf("commands %q, want no %s", commands(cmds), no)
				}
			}
		})
	}
}

// TestSchedule_Constraint: a job of --constraint runs on the nodes whose
// features satisfy it, and waits with Slurm's reason while none usable
// does.
func TestSchedule_Constraint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		constraint string
		want       []string
	}{
		{"all of two features", "ib&avx512",
			[]string{`place_job {"id":1,"attempt":1,"hosts":[{"node":"n3","procs":2}]}`}},
		{"either feature", "gpu|avx512",
			[]string{`place_job {"id":1,"attempt":1,"hosts":[{"node":"n2","procs":1},{"node":"n3","procs":1}]}`}},
		{"a feature no node has", "fpga",
			[]string{`set_wait_reason {"id":1,"reason":"ReqNodeNotAvail: no usable node has the features fpga"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "n1", "n2", "n3")
			w.node("n2").Features = []string{"gpu"}
			w.node("n3").Features = []string{"avx512", "ib"}
			ppn := 1
			if tc.constraint == "ib&avx512" {
				ppn = 2
			}
			submit(w, "a", raftfsm.JobSpec{NP: 2, PPN: ppn, MPI: "none", Constraint: tc.constraint})
			cmds, _ := Schedule(w.view(), JobsBook{})
			wantCommands(t, cmds, tc.want)
		})
	}
}
