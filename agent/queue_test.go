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
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Issue 21, item 2: one job whose placement raft refuses halted scheduling
// for the whole cluster (the leader's loop returned at the refusal, every
// round). Now the refused job fails with the reason and the jobs behind it run.
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
			Hostfile: []raftfsm.HostSlots{{Host: names[0], Slots: math.MaxInt}, {Host: names[1], Slots: math.MaxInt}, {Host: names[2], Slots: 3}}}})
	var se *api.StatusError
	if err == nil || !asStatus(err, &se) || se.Code != 400 || !strings.Contains(err.Error(), "hostfile") {
		t.Errorf("submit of a wrapping hostfile: %v, want 400 naming the hostfile", err)
	}
	after := submitAPI(t, c, 2, api.JobSpec{Cmd: []string{"true"}, NP: 1})
	waitState(t, c, 0, after, 30*time.Second, "done")
}
