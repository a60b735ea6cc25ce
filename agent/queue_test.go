package agent_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// One job whose placement raft refuses must not halt scheduling for the
// whole cluster (a leader loop that returned at the refusal would stop
// there every round): the refused job fails with the reason and the jobs
// behind it run.
func TestRefusedPlacementDoesNotHaltTheQueue(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, func(i int, cfg *agent.Config) {
		cfg.Testing.RefusePlacement = func(j *raftfsm.Job) bool { return slices.Contains(j.Spec.Cmd, "refuse-me") }
	})
	bad := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true", "refuse-me"}, NP: 2})
	good := submitAPI(t, c, 1, api.JobSpec{Cmd: []string{"true"}, NP: 2})
	waitState(t, c, 2, good, 30*time.Second, "done")
	j := waitState(t, c, 2, bad, 10*time.Second, "failed")
	if !strings.Contains(j.Reason, "refused") || !strings.Contains(j.Reason, "procs") {
		t.Fatalf("refused job failed with reason %q, want raft's refusal", j.Reason)
	}
	// shoal job shows the reason on any node, not only in the leader's debug log.
	out, _, code := shoalCLI(t, c, 1, "job", fmt.Sprint(bad))
	if code != 0 || !strings.Contains(out, "allocation was refused") {
		t.Fatalf("shoal job %d: exit %d:\n%s", bad, code, out)
	}

	// The real case: a hostfile whose counts wrap around to np = 1 when summed.
	// It is refused at submit now; before, it passed placement and raft refused
	// its allocation every round, so the job behind it waited forever.
	names := []string{c.Name(0), c.Name(1), c.Name(2)}
	_, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: t.Name() + "-wrap", Owner: "root",
		Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: os.TempDir(), Relax: "none",
			Hostfile: []api.HostSlots{{Host: names[0], Slots: math.MaxInt}, {Host: names[1], Slots: math.MaxInt}, {Host: names[2], Slots: 3}}}})
	var se *api.StatusError
	if err == nil || !asStatus(err, &se) || se.Code != 400 || !strings.Contains(err.Error(), "hostfile") {
		t.Errorf("submit of a wrapping hostfile: %v, want 400 naming the hostfile", err)
	}
	after := submitAPI(t, c, 2, api.JobSpec{Cmd: []string{"true"}, NP: 1})
	waitState(t, c, 0, after, 30*time.Second, "done")

	// POST /v1/alloc with a huge hostfile count would spin a core for 2^62
	// round-robin steps, on after the client left: it gets 400 at once.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	err = c.Client(1).Do(ctx, "POST", "/v1/alloc", placement.Request{Relax: "dist", Oversubscribe: true, Force: true,
		Hostfile: []placement.HostSlots{{Host: names[0], Slots: 1 << 62}}}, nil)
	if !asStatus(err, &se) || se.Code != 400 || !strings.Contains(se.Msg, "slots") {
		t.Fatalf("alloc with a 2^62-slot hostfile: %v after %v, want 400 at once", err, time.Since(start))
	}
	t.Logf("alloc with a 2^62-slot hostfile refused in %v", time.Since(start))
}

// loaded is a sampler of a node whose every core already runs five
// processes: placement calls the whole cluster overloaded.
type loaded struct{}

func (loaded) Sample(context.Context) (probe.RawSample, error) {
	return probe.RawSample{At: time.Now(), Load1: 40, MemAvail: 8 << 30}, nil
}

// Why a job waits is in the replicated state, not the leader's memory, so
// `shoal job` says it when asked of any node; it is written only when it
// changes.
func TestWaitReasonOnEveryNode(t *testing.T) {
	t.Parallel()
	// Declared switches: the leader infers and records (set_switches) the
	// switches of undeclared nodes as bandwidth tests arrive, which would
	// write raft inside the idle window below for a reason of its own.
	c := jobCluster(t, 3, func(i int, cfg *agent.Config) { cfg.Sampler, cfg.Switch = loaded{}, "sw1" })
	id := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 2})
	for i := range 3 {
		testcluster.WaitFor(t, 20*time.Second, fmt.Sprintf("node %d to say why job %d waits", i, id), func() bool {
			j := jobState(c, i, id)
			return j.State == "queued" && strings.Contains(j.WaitReason, "cluster overloaded")
		})
	}
	follower := (c.Leader() + 1) % 3
	out, _, code := shoalCLI(t, c, follower, "job", fmt.Sprint(id))
	if code != 0 || !strings.Contains(out, "cluster overloaded") {
		t.Fatalf("shoal job %d on follower %s: exit %d:\n%s", id, c.Name(follower), code, out)
	}
	// The leader schedules the first bandwidth cycle once membership has
	// been stable for a few seconds (formationSettle): that write is the
	// cluster's own, not the queue's, so the window starts after it.
	testcluster.WaitFor(t, 30*time.Second, "the first bandwidth cycle in raft", func() bool {
		return c.Agent(follower).FSM().State().ProbeDuties.Cycle > 0
	})
	// An idle queue does not write raft every round: the leader reconciles
	// every 500 ms, so over a 3 s window a reason proposed every round would
	// add six or more entries (a repeated reason is a no-op, but a logged one).
	since := c.Agent(follower).FSM().State().Jobs[id].WaitSince
	applied := c.Agent(follower).Raft().AppliedIndex()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		if n := c.Agent(follower).Raft().AppliedIndex(); n > applied+3 {
			t.Fatalf("raft grew from %d to %d entries while the queue was idle", applied, n)
		}
		time.Sleep(100 * time.Millisecond) // an observation window, not a synchronisation
	}
	if j := c.Agent(follower).FSM().State().Jobs[id]; !j.WaitSince.Equal(since) {
		t.Fatalf("wait reason rewritten with no change: since %v, now %v (%q)", since, j.WaitSince, j.WaitReason)
	}
	// Forced, the job runs, and the reason is gone everywhere.
	c.Client(0).Kill(context.Background(), id, "root")
	forced := submitAPI(t, c, 1, api.JobSpec{Cmd: []string{"true"}, NP: 2, Force: true, Oversubscribe: true})
	j := waitState(t, c, 2, forced, 30*time.Second, "done")
	if j.WaitReason != "" {
		t.Fatalf("placed job still shows wait reason %q", j.WaitReason)
	}
}
