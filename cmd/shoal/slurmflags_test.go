package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

func TestParseBegin(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{in: "now", want: now},
		{in: "now+60", want: now.Add(time.Minute)},
		{in: "now+30m", want: now.Add(30 * time.Minute)},
		{in: "now+2hours", want: now.Add(2 * time.Hour)},
		{in: "now+1d", want: now.Add(24 * time.Hour)},
		{in: "11:00", want: time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC)},
		{in: "10:00", want: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}, // passed today: tomorrow
		{in: "2026-11-24T12:00", want: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)},
		{in: "2026-12-01", want: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{in: "2026-11-24T12:00:00+01:00", want: time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC)},
		{in: "2026-11-24T10:00", err: "in the past"},
		{in: "2025-01-01", err: "in the past"},
		{in: "tomorrow-ish", err: "use now+30m"},
		{in: "now+", err: "now+N"},
		{in: "now-5m", err: "now+N"},
		{in: "now+5y", err: "now+N"},
	} {
		got, err := parseBegin(tc.in, now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseBegin(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseBegin(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseDependency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []api.Dependency
		err  string
	}{
		{in: "afterok:12", want: []api.Dependency{{Type: "afterok", IDs: []uint64{12}}}},
		{in: "afterok:12:13,afterany:4", want: []api.Dependency{{Type: "afterok", IDs: []uint64{12, 13}}, {Type: "afterany", IDs: []uint64{4}}}},
		{in: "afternotok:7", want: []api.Dependency{{Type: "afternotok", IDs: []uint64{7}}}},
		{in: "singleton", want: []api.Dependency{{Type: "singleton"}}},
		{in: "after:12", err: "unknown condition"},
		{in: "afterok", err: "needs job IDs"},
		{in: "afterok:x", err: "not a job ID"},
		{in: "afterok:0", err: "not a job ID"},
		{in: "afterok:1?afterany:2", err: "not supported"},
		{in: "singleton:3", err: "no job IDs"},
	} {
		got, err := parseDependency(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseDependency(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseDependency(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseArray(t *testing.T) {
	t.Parallel()
	seq := func(a, b int) []int {
		var out []int
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, tc := range []struct {
		in   string
		want api.ArraySpec
		err  string
	}{
		{in: "0-99", want: api.ArraySpec{Tasks: seq(0, 99)}},
		{in: "1,3,5", want: api.ArraySpec{Tasks: []int{1, 3, 5}}},
		{in: "0-99%10", want: api.ArraySpec{Tasks: seq(0, 99), Limit: 10}},
		{in: "1-9:4", want: api.ArraySpec{Tasks: []int{1, 5, 9}}},
		{in: "5,1-3,2", want: api.ArraySpec{Tasks: []int{1, 2, 3, 5}}},
		{in: "7", want: api.ArraySpec{Tasks: []int{7}}},
		{in: "5-1", err: "ends before it starts"},
		{in: "0-9%0", err: "%N"},
		{in: "0-9%", err: "%N"},
		{in: "-1", err: "not a task index"},
		{in: "a-b", err: "not a task index"},
		{in: "1-", err: "not a range"},
		{in: "3:2", err: "a step goes after a range"},
		{in: "0-9:0", err: "STEP >= 1"},
		{in: "0-2000000", err: "go up to"},
		{in: "0-20000", err: "more than"},
	} {
		got, err := parseArray(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseArray(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseArray(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFoldIndicesAndJobRef(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"3,4,5,7,9,10,11,12": "3-5,7,9-12", "0": "0", "1,3": "1,3", "": ""} {
		var ts []int
		for _, f := range strings.Split(in, ",") {
			if f != "" {
				n := 0
				for _, c := range f {
					n = n*10 + int(c-'0')
				}
				ts = append(ts, n)
			}
		}
		if got := foldIndices(ts); got != want {
			t.Errorf("foldIndices(%v) = %q, want %q", ts, got, want)
		}
	}
	for in, ok := range map[string]bool{"12": true, "12_3": true, "12_0": true, "0": false, "x": false, "12_": false, "12_-1": false, "_3": false} {
		if _, err := jobRef(in); (err == nil) != ok {
			t.Errorf("jobRef(%q) err = %v, want ok %v", in, err, ok)
		}
	}
}

// The listing folds an array's queued tasks that follow each other into
// one row, squeue's 12_[3-5%2]; started, held and other jobs keep their
// own rows.
func TestWriteJobsFoldsPendingTasks(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	task := func(id uint64, n int, state string, held bool) api.Job {
		return api.Job{ID: id, State: state, Owner: "alice", Name: "sweep", Held: held, ArrayJobID: 12, ArrayTaskID: &n, ArrayLimit: 2,
			SubmittedAt: now, Spec: api.JobSpec{Cmd: []string{"./sweep"}, NP: 1}}
	}
	js := []api.Job{
		{ID: 11, State: "running", Owner: "bob", SubmittedAt: now, Spec: api.JobSpec{Cmd: []string{"./x"}, NP: 2}, Hosts: []api.JobHost{{Node: "n1", Procs: 2}}},
		task(12, 0, "running", false), task(13, 1, "done", false),
		task(14, 2, "queued", false), task(15, 3, "queued", false), task(16, 4, "queued", false),
		task(17, 5, "queued", true), task(18, 7, "queued", false),
	}
	var b strings.Builder
	writeJobs(&b, js, now)
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		ids = append(ids, strings.Fields(l)[0]+" "+strings.Fields(l)[2])
	}
	want := []string{"11 running", "12_0 running", "12_1 done", "12_[2-4%2] queued", "12_[5%2] queued", "12_[7%2] queued"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("rows %q, want %q:\n%s", ids, want, b.String())
	}
	if !strings.Contains(b.String(), "queued (held)") || !strings.Contains(b.String(), "sweep") {
		t.Errorf("held task or name not shown:\n%s", b.String())
	}
}
