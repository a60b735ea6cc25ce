package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestSlurmHabitsLive drives names, begin, hold/release, dependencies and
// an array with a limit through the CLI against a real two-node cluster.
func TestSlurmHabitsLive(t *testing.T) {
	// Idle nodes whatever the machine's load: on a busy 2-core machine the
	// real load average would keep every job waiting as overloaded.
	c := testcluster.New(t, 2, testcluster.Options{Sampler: func(int) probe.Sampler { return idleSampler{} }})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}
	cl := c.Client(0)
	ctx := context.Background()
	submit := func(args ...string) uint64 {
		t.Helper()
		out, errOut, code := shoal(t, env, append([]string{"submit", "--mpi", "none", "-n", "1"}, args...)...)
		if code != 0 {
			t.Fatalf("submit %q: exit %d: %s", args, code, errOut)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
		if err != nil {
			t.Fatalf("submit printed %q", out)
		}
		return id
	}
	job := func(id uint64) api.Job {
		j, err := cl.Job(ctx, id)
		if err != nil {
			t.Fatalf("job %d: %v", id, err)
		}
		return j
	}
	waitFor := func(id uint64, what string, cond func(api.Job) bool) api.Job {
		t.Helper()
		var j api.Job
		testcluster.WaitFor(t, 60*time.Second, what, func() bool { j = job(id); return cond(j) },
			func() string { return j.State + " / " + j.WaitReason + " / " + j.Reason })
		return j
	}

	// A parent that fails makes its afterok child never satisfiable; its
	// afternotok child runs.
	parent := submit("-J", "parent", "--", "sh", "-c", "sleep 1; exit 3")
	okChild := submit("-J", "child", "--dependency", "afterok:"+strconv.FormatUint(parent, 10), "--", "true")
	notOK := submit("--dependency", "afternotok:"+strconv.FormatUint(parent, 10), "--", "true")
	if j := job(okChild); j.Name != "child" || j.Spec.Depend[0].Type != "afterok" {
		t.Errorf("child: name %q depend %+v", j.Name, j.Spec.Depend)
	}
	waitFor(okChild, "the afterok child to wait for its parent", func(j api.Job) bool {
		return j.State == "failed" || strings.HasPrefix(j.WaitReason, "Dependency: afterok")
	})
	j := waitFor(okChild, "the afterok child of a failed parent to fail", func(j api.Job) bool { return terminal(j.State) })
	if j.State != "failed" || !strings.HasPrefix(j.Reason, "DependencyNeverSatisfied: afterok:") {
		t.Errorf("afterok child of a failed parent: %s %q", j.State, j.Reason)
	}
	waitFor(notOK, "the afternotok child to run", func(j api.Job) bool { return j.State == "done" })

	// --begin waits; hold overrides; release goes back to waiting for the time.
	later := submit("-J", "later", "--begin", "now+1h", "--", "true")
	waitFor(later, "a BeginTime wait", func(j api.Job) bool { return strings.HasPrefix(j.WaitReason, "BeginTime") })
	if _, errOut, code := shoal(t, env, "hold", strconv.FormatUint(later, 10)); code != 0 {
		t.Fatalf("hold: exit %d: %s", code, errOut)
	}
	waitFor(later, "a held wait", func(j api.Job) bool { return j.Held && strings.HasPrefix(j.WaitReason, "JobHeldUser") })
	if _, errOut, code := shoal(t, env, "release", strconv.FormatUint(later, 10)); code != 0 {
		t.Fatalf("release: exit %d: %s", code, errOut)
	}
	waitFor(later, "the BeginTime wait again", func(j api.Job) bool { return !j.Held && strings.HasPrefix(j.WaitReason, "BeginTime") })
	// root ran jobs above: its fair-share factor is below 1, the effective priority in (0,1).
	if p := job(later).EffectivePriority; p <= 0 || p >= 1 {
		t.Errorf("effective priority of a priority-0 job after usage = %v, want in (0,1)", p)
	}

	// An array of 20 with %4 (the case): never more than 4 tasks hold slots at once, all finish.
	arr := submit("-J", "sweep", "--array", "0-19%4", "--", "sleep", "0.3")
	out, _, _ := shoal(t, env, "jobs")
	if !strings.Contains(out, strconv.FormatUint(arr, 10)+"_[") || !strings.Contains(out, "%4]") {
		t.Errorf("shoal jobs does not fold the array's queued tasks:\n%s", out)
	}
	var tasks []api.Job
	testcluster.WaitFor(t, 90*time.Second, "all 20 tasks done", func() bool {
		tasks = tasks[:0]
		for id := arr; id < arr+20; id++ {
			if j := job(id); j.State == "done" {
				tasks = append(tasks, j)
			}
		}
		return len(tasks) == 20
	})
	for i, tk := range tasks {
		if tk.ArrayJobID != arr || tk.ArrayTaskID == nil || *tk.ArrayTaskID != i {
			t.Errorf("task %d: array %d task %v", i, tk.ArrayJobID, tk.ArrayTaskID)
		}
	}
	if n := maxOverlap(tasks); n > 4 || n < 1 {
		t.Errorf("at most %d tasks held slots at once, want 1 to 4 (limit %%4)", n)
	}

	// Killing the array's ID kills every task left; one task by ARRAY_TASK.
	big := submit("--array", "0-3", "--begin", "now+1h", "--", "true")
	if _, errOut, code := shoal(t, env, "kill", strconv.FormatUint(big, 10)+"_2"); code != 0 {
		t.Fatalf("kill one task: exit %d: %s", code, errOut)
	}
	if j := job(big + 2); j.State != "killed" || job(big).State != "queued" {
		t.Fatalf("kill %d_2: task 2 %s, task 0 %s", big, j.State, job(big).State)
	}
	if _, errOut, code := shoal(t, env, "kill", strconv.FormatUint(big, 10)); code != 0 {
		t.Fatalf("kill array: exit %d: %s", code, errOut)
	}
	for id := big; id < big+4; id++ {
		if j := job(id); j.State != "killed" {
			t.Errorf("after killing array %d, task job %d is %s", big, id, j.State)
		}
	}
}

// maxOverlap is the most attempts whose [placed, ended] intervals overlap.
func maxOverlap(js []api.Job) int {
	type ev struct {
		at    time.Time
		delta int
	}
	var evs []ev
	for _, j := range js {
		for _, a := range j.Attempts {
			if a.PlacedAt != nil && a.EndedAt != nil {
				evs = append(evs, ev{*a.PlacedAt, 1}, ev{*a.EndedAt, -1})
			}
		}
	}
	// ends before starts at the same instant: a slot freed and retaken.
	for i := range evs {
		for k := i + 1; k < len(evs); k++ {
			if evs[k].at.Before(evs[i].at) || (evs[k].at.Equal(evs[i].at) && evs[k].delta < evs[i].delta) {
				evs[i], evs[k] = evs[k], evs[i]
			}
		}
	}
	n, top := 0, 0
	for _, e := range evs {
		n += e.delta
		top = max(top, n)
	}
	return top
}
