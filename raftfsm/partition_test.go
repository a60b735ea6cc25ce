package raftfsm

import (
	"errors"
	"testing"
	"time"
)

// TestPartitions: root sets partitions, a job gets the default one and
// its limits, names another, or is refused for what the partition does
// not allow; a partition a queued job names cannot be deleted.
func TestPartitions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	debug := Partition{Name: "debug", Nodes: []string{"a", "b"}, Default: true, MaxTime: time.Hour, DefaultTime: 10 * time.Minute, MaxNodes: 2}
	h.refused(CmdSetPartition, SetPartition{User: "alice", Partition: debug}, ErrNotOwner)
	h.refused(CmdSetPartition, SetPartition{User: "root", Partition: Partition{Name: "bad name"}}, ErrInvalid)
	h.refused(CmdSetPartition, SetPartition{User: "root", Partition: Partition{Name: "x", Nodes: []string{"b", "a"}}}, ErrInvalid)
	h.ok(CmdSetPartition, SetPartition{User: "root", Partition: debug})
	h.ok(CmdSetPartition, SetPartition{User: "root", Partition: Partition{Name: "gpu", Nodes: []string{"c"}, AllowUsers: []string{"bob"}, NoOversubscribe: true}})
	submit := func(req, owner string, sp JobSpec) Result {
		sp.Cmd = []string{"x"}
		return h.do(CmdSubmitJob, SubmitJob{RequestID: req, Owner: owner, Spec: sp})
	}
	r := submit("plain", "alice", JobSpec{NP: 2})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if j := h.job(r.JobID); j.Spec.Partition != "debug" || j.Spec.Timeout != 10*time.Minute {
		t.Errorf("a job naming no partition: partition %q, limit %s; want debug's default, 10m", j.Spec.Partition, j.Spec.Timeout)
	}
	for name, tc := range map[string]struct {
		owner string
		sp    JobSpec
		want  error
	}{
		"no such partition":     {"alice", JobSpec{NP: 1, Partition: "nope"}, ErrInvalid},
		"above the max time":    {"alice", JobSpec{NP: 1, Timeout: 2 * time.Hour}, ErrInvalid},
		"more nodes than max":   {"alice", JobSpec{NP: 3, PPN: 1}, ErrInvalid},
		"a user not allowed":    {"alice", JobSpec{NP: 1, Partition: "gpu"}, ErrNotOwner},
		"sharing where refused": {"bob", JobSpec{NP: 1, Partition: "gpu", Oversubscribe: true}, ErrInvalid},
	} {
		before := len(h.f.State().Jobs)
		if r := submit(name, tc.owner, tc.sp); !errors.Is(r.Err, tc.want) {
			t.Errorf("%s: %v, want %v", name, r.Err, tc.want)
		}
		if len(h.f.State().Jobs) != before {
			t.Errorf("%s: a refused submit queued a job", name)
		}
	}
	if r := submit("bob-gpu", "bob", JobSpec{NP: 1, Partition: "gpu"}); r.Err != nil || h.job(r.JobID).Spec.Timeout != 0 {
		t.Errorf("bob in gpu: %v, limit %v; want queued with no limit", r.Err, r.JobID)
	}
	// A new default takes the mark from the old one.
	h.ok(CmdSetPartition, SetPartition{User: "root", Partition: Partition{Name: "all", Default: true}})
	if d := h.f.State().DefaultPartition(); d != "all" || h.f.State().Partitions["debug"].Default {
		t.Errorf("default partition %q after setting another default, debug still default: %v", d, h.f.State().Partitions["debug"].Default)
	}
	h.refused(CmdDelPartition, DeletePartition{User: "root", Name: "debug"}, ErrWrongState) // job "plain" is queued there
	h.refused(CmdDelPartition, DeletePartition{User: "alice", Name: "all"}, ErrNotOwner)
	h.ok(CmdDelPartition, DeletePartition{User: "root", Name: "all"})
	if _, ok := h.f.State().Partitions["all"]; ok {
		t.Error("a deleted partition is still there")
	}
}
