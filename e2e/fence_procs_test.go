package e2e

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestFence_PausedHeadNeverRunsBesideItsRetry stops the agent heading
// running jobs with SIGSTOP for 20 s, longer than gossip takes to declare
// it dead, then lets it go on. Every job beats (job, attempt, time) into
// a file ten times a second. The paused agent cannot stop anything, but
// its fence guard freezes the jobs once the lease lapses, and the leader
// retries them elsewhere only after the lease and its margin: no two
// attempts of a job may beat in overlapping spans of time, and every job
// ends done in a later attempt. With fencing off (SHOAL_FENCE_LEASE=0 in
// the environment the agents inherit) the paused copies run beside their
// retries for about 14 s and the test fails.
func TestFence_PausedHeadNeverRunsBesideItsRetry(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skip("end-to-end tests: set " + enableEnv + "=1 (make e2e)")
	}
	const (
		nodes = 4
		jobs  = 6
		pause = 20 * time.Second
	)
	dir := t.TempDir()
	var pc *testcluster.ProcCluster
	var err error
	for try := range 5 {
		// Ports below the kernel's ephemeral range, spread by pid and try:
		// other clusters may run on this machine at the same time.
		base := 20000 + (os.Getpid()*7+try*997)%9000*3
		pc, err = testcluster.StartProcs(testcluster.ProcOptions{Bin: shoalBin(t), N: nodes, Dir: filepath.Join(dir, fmt.Sprint(try)), BasePort: base,
			Args: []string{"--bandwidth-interval", "1h", "--latency-interval", "10m"}})
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	p := &procCluster{ProcCluster: pc, index: map[string]int{}}
	for i, nd := range pc.Nodes {
		p.cl = append(p.cl, pc.Client(i))
		p.index[nd.Name] = i
	}
	victim := -1
	t.Cleanup(func() {
		if victim >= 0 {
			_ = syscall.Kill(pc.Nodes[victim].PID, syscall.SIGCONT)
		}
		if t.Failed() {
			for _, nd := range pc.Nodes {
				b, _ := os.ReadFile(nd.Log)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("--- %s (last lines of %s)\n%s", nd.Name, nd.Log, strings.Join(lines[max(0, len(lines)-20):], "\n"))
			}
		}
		pc.StopAll()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := pc.WaitConverged(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	names := slices.Collect(maps.Keys(p.index))
	slices.Sort(names)

	beats := filepath.Join(dir, "beats")
	// 400 beats: 40 s of work on an idle machine, more on a busy one.
	script := `i=0; while [ $i -lt 400 ]; do echo "$SHOAL_JOB_ID $SHOAL_ATTEMPT $(date +%s%3N)" >> ` + beats + `; i=$((i+1)); sleep 0.1; done`
	var ids []uint64
	for k := range jobs {
		req := api.SubmitRequest{RequestID: fmt.Sprint("fence-", k), Owner: "root", Spec: api.JobSpec{
			Cmd: []string{"sh", "-c", script}, NP: 1, PPN: 1, MPI: "none", MaxAttempts: 3, Workdir: dir, Force: true, Oversubscribe: true}}
		id, _, err := p.submit(req, names, k, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Every job running and beating; the victim is the node heading most.
	heads := map[string][]uint64{}
	testcluster.WaitFor(t, 3*time.Minute, "every job running and beating", func() bool {
		clear(heads)
		seen := beatSpans(t, beats)
		for _, id := range ids {
			j, err := p.cl[0].Job(ctx, id)
			if err != nil || j.State != "running" || seen[id][1].n < 3 {
				return false
			}
			heads[j.Attempts[len(j.Attempts)-1].Head] = append(heads[j.Attempts[len(j.Attempts)-1].Head], id)
		}
		return true
	})
	head := ""
	for h, js := range heads {
		if head == "" || len(js) > len(heads[head]) {
			head = h
		}
	}
	victim = p.index[head]
	leaderName := ""
	if l, err := p.cl[(victim+1)%nodes].Leader(ctx); err == nil {
		leaderName = l.Name
	}
	t.Logf("pausing %s (leader %s) for %v: it heads jobs %v of %v", head, leaderName, pause, heads[head], ids)
	if err := syscall.Kill(pc.Nodes[victim].PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	ask := p.cl[(victim+1)%nodes]
	// The retries start elsewhere while the node is still paused.
	testcluster.WaitFor(t, pause, "every job of the paused head retried elsewhere", func() bool {
		for _, id := range heads[head] {
			j, err := ask.Job(ctx, id)
			if err != nil || j.Attempt < 2 {
				return false
			}
		}
		return true
	})
	retried := time.Since(paused)
	if rest := pause - time.Since(paused); rest > 0 {
		time.Sleep(rest) // the pause itself: the node stays stopped this long
	}
	if err := syscall.Kill(pc.Nodes[victim].PID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	victim = -1
	t.Logf("retries placed %v after the pause began; %s continued after %v", retried.Round(time.Millisecond), head, time.Since(paused).Round(time.Millisecond))
	for _, id := range ids {
		p.waitDone(t, names[(p.index[head]+1)%nodes], id, 5*time.Minute)
	}

	spans := beatSpans(t, beats)
	worst := time.Duration(0)
	for _, id := range heads[head] {
		as := slices.Sorted(maps.Keys(spans[id]))
		if len(as) < 2 {
			t.Errorf("job %d beat under attempts %v only, want a retry", id, as)
			continue
		}
		for i, a := range as {
			for _, b := range as[i+1:] {
				sa, sb := spans[id][a], spans[id][b]
				over := earlier(sa.last, sb.last).Sub(later(sa.first, sb.first))
				gap := sb.first.Sub(sa.last)
				t.Logf("job %d: attempt %d beat %v to %v (%d beats), attempt %d from %v: overlap %v, gap %v", id,
					a, sa.first.Sub(paused).Round(time.Millisecond), sa.last.Sub(paused).Round(time.Millisecond), sa.n,
					b, sb.first.Sub(paused).Round(time.Millisecond), max(over, 0), gap.Round(time.Millisecond))
				worst = max(worst, over)
			}
		}
	}
	if worst > 0 {
		t.Fatalf("two attempts of one job ran at once for up to %v", worst.Round(time.Millisecond))
	}
}

// span is when one attempt of a job beat: its first and last beat and how many.
type span struct {
	first, last time.Time
	n           int
}

// beatSpans reads the beats file: per job and attempt, the span of its beats.
func beatSpans(t *testing.T, path string) map[uint64]map[int]span {
	t.Helper()
	out := map[uint64]map[int]span{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var id uint64
		var att int
		var ms int64
		if _, err := fmt.Sscan(sc.Text(), &id, &att, &ms); err != nil {
			continue // a line cut by a kill
		}
		at := time.UnixMilli(ms)
		if out[id] == nil {
			out[id] = map[int]span{}
		}
		s := out[id][att]
		if s.n == 0 || at.Before(s.first) {
			s.first = at
		}
		if at.After(s.last) {
			s.last = at
		}
		s.n++
		out[id][att] = s
	}
	return out
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
