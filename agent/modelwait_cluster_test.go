package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestNetloadJobWaitsForTheNetworkModel, on a live cluster that has just
// formed: a netload job stays queued with the reason "waiting for the
// network model: N of 3 nodes measured" until the first bandwidth cycle
// has measured every pair (loopback declares no switches), then is placed
// well before --placement-model-wait; a load-policy job is placed at once.
func TestNetloadJobWaitsForTheNetworkModel(t *testing.T) {
	t.Parallel()
	bin := testcluster.BuildShoal(t)
	// The bound the agents wait for the model, sized for this machine's
	// load: measuring three nodes takes longer on a busy one, and the test
	// is that the model, not the bound, releases the job.
	bound := testcluster.Stretch(time.Minute)
	c := testcluster.New(t, 3, testcluster.Options{Twins: true, Bin: bin, Configure: func(i int, cfg *agent.Config) {
		fastProbes(i, cfg)
		cfg.Probes.BandwidthInterval = time.Hour
		// One cycle must measure every pair: a test cut short by a
		// starved machine is retried only a few times in it.
		cfg.Probes.BandwidthTimeout = testcluster.Stretch(cfg.Probes.BandwidthTimeout)
		cfg.Probes.RoundSlack = testcluster.Stretch(cfg.Probes.RoundSlack)
		cfg.PlacementModelWait = bound
	}})
	leader := c.WaitLeader(45 * time.Second)
	submit := func(policy string) (uint64, time.Time) {
		// Forced: the test shares the machine's load average, and on a busy
		// machine the overload rule, not the model, would hold both jobs.
		spec := api.JobSpec{Cmd: []string{"/bin/true"}, NP: 3, PPN: 1, MPI: "none", Policy: policy, MaxAttempts: 1, Force: true}
		res, err := c.Client(leader).Submit(context.Background(), api.SubmitRequest{
			RequestID: fmt.Sprintf("%s-%s-%d", t.Name(), policy, time.Now().UnixNano()), Owner: "root", Spec: spec})
		if err != nil {
			t.Fatalf("submit %s: %v", policy, err)
		}
		return res.ID, time.Now()
	}
	net, at := submit("netload")
	load, _ := submit("load")
	var reason string
	var j api.Job
	testcluster.WaitFor(t, time.Minute, "the netload job placed", func() bool {
		j = jobState(c, leader, net)
		if strings.HasPrefix(j.WaitReason, "waiting for the network model: ") {
			reason = j.WaitReason
		}
		return j.State != "queued"
	}, func() string { return fmt.Sprintf("job %s (%s)", j.State, j.WaitReason) })
	placed := time.Since(at)
	if reason == "" || !strings.HasSuffix(reason, " of 3 nodes measured") {
		t.Errorf("the netload job was never seen waiting for the model (last reason %q)", reason)
	}
	if placed > bound*3/4 {
		t.Errorf("placed %v after submission: the bound, not the model, let it go", placed)
	}
	t.Logf("netload job waited %q, placed %v after submission", reason, placed.Round(time.Millisecond))
	if lj := jobState(c, leader, load); lj.State == "queued" && strings.HasPrefix(lj.WaitReason, "waiting for the network model") {
		t.Errorf("the load-policy job waits for the model: %q", lj.WaitReason)
	}
}
