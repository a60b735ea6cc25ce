package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestRestart_SIGUSR2AdoptsTheRunningJob restarts a real `shoal agent`
// process under a running job as a service manager restarts it (SIGUSR2,
// the packaged unit's RestartKillSignal), and starts it again on its data
// directory: the job, which waits for a file, runs on through the
// restart, and once released is recorded done once, under attempt 1, with
// all its output.
func TestRestart_SIGUSR2AdoptsTheRunningJob(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skip("end-to-end tests: set " + enableEnv + "=1 (make e2e)")
	}
	dir := t.TempDir()
	var pc *testcluster.ProcCluster
	var err error
	for try := range 5 {
		base := 20000 + (os.Getpid()*11+try*997)%9000*3
		pc, err = testcluster.StartProcs(testcluster.ProcOptions{Bin: shoalBin(t), N: 3, Dir: filepath.Join(dir, fmt.Sprint(try)), BasePort: base,
			Args: []string{"--bandwidth-interval", "1h", "--latency-interval", "10m"}})
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(dir, "release")
	t.Cleanup(func() {
		_ = os.WriteFile(release, nil, 0o644)
		if t.Failed() {
			for _, nd := range pc.Nodes {
				b, _ := os.ReadFile(nd.Log)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("--- %s (last lines of %s)\n%s", nd.Name, nd.Log, strings.Join(lines[max(0, len(lines)-20):], "\n"))
			}
		}
		pc.StopAll()
	})
	p := &procCluster{ProcCluster: pc, index: map[string]int{}}
	var names []string
	for i, nd := range pc.Nodes {
		p.cl = append(p.cl, pc.Client(i))
		p.index[nd.Name] = i
		names = append(names, nd.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := pc.WaitConverged(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	const victim = 2
	script := `echo "begun $SHOAL_ATTEMPT"; while [ ! -e ` + release + ` ]; do sleep 0.05; done; echo "ended $SHOAL_ATTEMPT"`
	id, _, err := p.submit(api.SubmitRequest{RequestID: "restart-adopt", Owner: "root", Spec: api.JobSpec{
		Cmd: []string{"sh", "-c", script}, NP: 1, MPI: "none", MaxAttempts: 3, Workdir: dir, Force: true, Oversubscribe: true,
		Hostfile: []api.HostSlots{{Host: names[victim], Slots: 1}}}}, names, 0, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ask := p.cl[0]
	logs := func() string {
		var b bytes.Buffer
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = ask.Stream(c, fmt.Sprintf("/v1/jobs/%d/logs?attempt=1", id), &b)
		return b.String()
	}
	testcluster.WaitFor(t, 2*time.Minute, "the job running and printing", func() bool {
		return strings.Contains(logs(), "begun 1")
	})
	if err := pc.StopForRestart(victim); err != nil {
		t.Fatal(err)
	}
	if err := pc.Restart(victim); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	j := p.waitDone(t, names[0], id, 2*time.Minute)
	if j.Attempt != 1 || len(j.Attempts) != 1 || j.Attempts[0].ExitCode == nil || *j.Attempts[0].ExitCode != 0 {
		t.Fatalf("job %d: attempt %d, %+v; want attempt 1 only, exit code 0", id, j.Attempt, j.Attempts)
	}
	if out := logs(); !strings.Contains(out, "begun 1") || !strings.Contains(out, "ended 1") || strings.Contains(out, "begun 2") {
		t.Errorf("attempt 1's log:\n%s\nwant its begin and its end, once", out)
	}
}
