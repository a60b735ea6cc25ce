package raftfsm

import (
	"strings"
	"testing"
)

// record_usage keeps one record per node, sorted, the final one winning; an
// OOM kill reported while the attempt runs makes its failure the OOM's, not
// retried even when the launcher blamed a lost node; one reported after the
// end rewrites the reason.
func TestRecordUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	j1 := h.submit("1", 4)
	h.launch(j1, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: j1, Attempt: 1})
	h.ok(CmdRecordUsage, RecordUsage{ID: j1, Attempt: 1, Usage: NodeUsage{Node: "b", CPUSeconds: 2, MaxRSSBytes: 10, Final: true}})
	h.ok(CmdRecordUsage, RecordUsage{ID: j1, Attempt: 1, Usage: NodeUsage{Node: "a", CPUSeconds: 1, MaxRSSBytes: 5}})
	if r := h.ok(CmdRecordUsage, RecordUsage{ID: j1, Attempt: 1, Usage: NodeUsage{Node: "b", CPUSeconds: 1}}); !r.Noop {
		t.Errorf("a running report after the final one = %+v, want a no-op", r)
	}
	h.refused(CmdRecordUsage, RecordUsage{ID: j1, Attempt: 1, Usage: NodeUsage{Node: "z"}}, ErrInvalid)
	h.refused(CmdRecordUsage, RecordUsage{ID: j1, Attempt: 2, Usage: NodeUsage{Node: "a"}}, ErrInvalid)
	h.refused(CmdRecordUsage, RecordUsage{ID: j1, Attempt: 1, Usage: NodeUsage{Node: "a", OOMKills: 1}}, ErrInvalid)
	us := h.job(j1).Attempts[0].Usage
	if len(us) != 2 || us[0].Node != "a" || us[1].Node != "b" || us[1].CPUSeconds != 2 {
		t.Fatalf("usage %+v, want a then b (b's final record)", us)
	}
	if tot := UsageTotal(us); tot.CPUSeconds != 3 || tot.MaxRSSBytes != 15 {
		t.Errorf("total %+v, want 3 CPU seconds and 15 bytes", tot)
	}

	const oom = "out of memory on b (limit 64M, peak 64M)"
	h.ok(CmdRecordUsage, RecordUsage{ID: j1, Attempt: 1, Usage: NodeUsage{Node: "b", OOMKills: 1, OOM: oom, Final: true}})
	h.ok(CmdFailAttempt, FailAttempt{ID: j1, Attempt: 1, Reason: "lost node(s) [b]", Retry: true})
	if j := h.wantState(j1, StateFailed); j.Reason != oom || j.Attempts[0].Reason != oom {
		t.Errorf("job %q attempt %q, want %q, not retried", j.Reason, j.Attempts[0].Reason, oom)
	}

	j2 := h.submit("2", 4)
	h.launch(j2, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: j2, Attempt: 1})
	code := 137
	h.ok(CmdFinishAttempt, FinishAttempt{ID: j2, Attempt: 1, ExitCode: &code})
	h.ok(CmdRecordUsage, RecordUsage{ID: j2, Attempt: 1, Usage: NodeUsage{Node: "a", OOMKills: 2, OOM: oom, Final: true}})
	if j := h.wantState(j2, StateFailed); j.Reason != oom {
		t.Errorf("job %q, want %q", j.Reason, oom)
	}
}

func TestConfinementSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec JobSpec
		want string
	}{
		{JobSpec{Cmd: []string{"x"}, NP: 1, MemPerNode: 1, MemPerRank: 1}, "both set"},
		{JobSpec{Cmd: []string{"x"}, NP: 1, MemPerNode: MaxMemBytes + 1}, "mem_per_node"},
		{JobSpec{Cmd: []string{"x"}, NP: 1, CPUsPerRank: -1}, "cpus_per_rank"},
	} {
		if err := ValidateSpec(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateSpec(%+v) = %v, want %q", tc.spec, err, tc.want)
		}
	}
	s := JobSpec{MemPerRank: 10}
	if s.MemOn(3) != 30 || s.CPUs() != 1 {
		t.Errorf("MemOn(3) = %d, CPUs() = %d; want 30, 1", s.MemOn(3), s.CPUs())
	}
}
