package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// BenchmarkJobReadFence times reads of one job through a follower of a
// three-server cluster, interleaved so each sees the same load, and
// reports each kind's median: a hit (no fence), a miss (an ID no agent
// has: the leader's read index, then 404), a ?consistent read of the
// hit, and a miss on the leader itself.
//
//	go test -run '^$' -bench JobReadFence -benchtime 200x ./agent
func BenchmarkJobReadFence(b *testing.B) {
	c := testcluster.New(b, 3, testcluster.Options{
		Bin:     testcluster.BuildShoal(b),
		Sampler: func(int) probe.Sampler { return idle{} },
		Configure: func(_ int, cfg *agent.Config) {
			cfg.Probes.InProcess = true
		},
	})
	leader := c.WaitLeader(45 * time.Second)
	follower := (leader + 1) % 3
	ctx := context.Background()
	res, err := c.Client(leader).Submit(ctx, api.SubmitRequest{RequestID: "bench", Owner: "root",
		Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: b.TempDir(), MaxAttempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.Client(follower).JobAt(ctx, res.ID, res.Index); err != nil {
		b.Fatal(err)
	}
	missing := fmt.Sprint(res.ID + 1_000_000)
	read := func(i int, ref string, consistent bool, want int) time.Duration {
		get := c.Client(i).JobRef
		if consistent {
			get = c.Client(i).ConsistentJobRef
		}
		start := time.Now()
		_, err := get(ctx, ref)
		took := time.Since(start)
		var se *api.StatusError
		switch {
		case want == http.StatusOK && err != nil,
			want != http.StatusOK && (!errors.As(err, &se) || se.Code != want):
			b.Fatalf("job %s through %s: %v, want %d", ref, c.Name(i), err, want)
		}
		return took
	}
	hitRef := fmt.Sprint(res.ID)
	var hit, miss, consistent, leaderMiss []time.Duration
	b.ResetTimer()
	for range b.N {
		hit = append(hit, read(follower, hitRef, false, http.StatusOK))
		miss = append(miss, read(follower, missing, false, http.StatusNotFound))
		consistent = append(consistent, read(follower, hitRef, true, http.StatusOK))
		leaderMiss = append(leaderMiss, read(leader, missing, false, http.StatusNotFound))
	}
	b.StopTimer()
	b.ReportMetric(median(hit), "ms/hit")
	b.ReportMetric(median(miss), "ms/miss")
	b.ReportMetric(median(consistent), "ms/consistent")
	b.ReportMetric(median(leaderMiss), "ms/leader-miss")
}
