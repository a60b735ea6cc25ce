package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// errEnough ends a stream from its callback.
var errEnough = errors.New("enough")

// collect reads node i's stream of job and attempt events, resumed after
// index after, until the job named name ends (by name: the stream may
// start before the job is submitted), and returns that job's events.
func collect(ctx context.Context, c *testcluster.Cluster, i int, name string, after uint64) ([]api.Event, error) {
	var got []api.Event
	var id uint64
	err := c.Client(i).Events(ctx, api.EventsQuery{Topics: []string{"job", "attempt"}, After: after, Resume: true}, func(e api.Event) error {
		if e.Type == "reset" {
			return fmt.Errorf("a reset at %d: the stream lost events", e.Index)
		}
		got = append(got, e)
		var j api.Job
		if e.Topic == "job" && json.Unmarshal(e.Payload, &j) == nil && j.Name == name {
			id = j.ID
			if e.Type == "ended" {
				return errEnough
			}
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		return nil, fmt.Errorf("stream from %d: %w (got %s)", after, err, eventNames(got))
	}
	var mine []api.Event
	key := strconv.FormatUint(id, 10)
	for _, e := range got {
		if e.Key == key || strings.HasPrefix(e.Key, key+"/") {
			mine = append(mine, e)
		}
	}
	return mine, nil
}

func eventNames(evs []api.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Topic+":"+e.Type)
	}
	return out
}

// TestEventStreamOrderAndResume: a client that reads the jobs, takes the
// answer's X-Shoal-Index and streams from it sees a job's whole life in
// order (on an agent that is not the one it was submitted to), and a
// second stream resumed from the index of one of those events gets
// exactly the events after it.
func TestEventStreamOrderAndResume(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start, err := c.Client(1).WaitJobs(ctx, 0, time.Second)
	if err != nil {
		t.Fatalf("read the state's index: %v", err)
	}
	name := "stream-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	type streamed struct {
		evs []api.Event
		err error
	}
	first := make(chan streamed, 1)
	go func() {
		evs, err := collect(ctx, c, 1, name, start)
		first <- streamed{evs, err}
	}()
	// The stream runs from the index read before the job existed.
	id := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 1, Name: name})
	res := <-first
	if res.err != nil {
		t.Fatal(res.err)
	}
	evs := res.evs
	names := eventNames(evs)
	for _, want := range [][]string{
		{"job:submitted", "job:placed", "job:started", "job:ended"},
		{"attempt:placed", "attempt:started", "attempt:ended"},
		{"job:submitted", "attempt:placed", "attempt:started", "attempt:ended", "job:ended"},
	} {
		if !inOrder(names, want) {
			t.Fatalf("events %v lack %v in that order", names, want)
		}
	}
	for i, e := range evs {
		if e.Index <= start || i > 0 && e.Index < evs[i-1].Index {
			t.Fatalf("event %d index %d: indexes must rise from the read's %d: %+v", i, e.Index, start, evs)
		}
	}
	var last api.Job
	if err := json.Unmarshal(evs[len(evs)-1].Payload, &last); err != nil || last.ID != id || last.State != "done" {
		t.Fatalf("the last event's payload is job %d %q (%v), want job %d done", last.ID, last.State, err, id)
	}
	// Resume after the first event whose index is below the end's: the
	// second stream gets exactly the events above that index.
	cut := evs[0].Index
	var want []string
	for _, e := range evs {
		if e.Index > cut {
			want = append(want, fmt.Sprintf("%d %s:%s %s", e.Index, e.Topic, e.Type, e.Key))
		}
	}
	if len(want) == 0 {
		t.Skipf("every event of the job came at one index (%d): nothing to resume into", cut)
	}
	resumed, err := collect(ctx, c, 1, name, cut)
	if err != nil {
		t.Fatal(err)
	}
	var again []string
	for _, e := range resumed {
		again = append(again, fmt.Sprintf("%d %s:%s %s", e.Index, e.Topic, e.Type, e.Key))
	}
	if !slices.Equal(again, want) {
		t.Fatalf("resumed from %d:\n got %v\nwant %v", cut, again, want)
	}
}

// inOrder says whether want occurs in got as a subsequence.
func inOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// recorder is a proxy in front of an agent that keeps, for every read of
// a job, the index it asked to wait past, the index answered, and how long
// it took.
type recorder struct {
	mu    sync.Mutex
	reads []jobRead
}

type jobRead struct {
	asked, answered uint64
	took            time.Duration
}

// TestRunWaitsOnTheIndex: `shoal run` of a short job returns as soon as
// the agent applies the end. Every read of the job after the first asks
// the agent to wait past the index of the answer before it, and each is
// answered because the state moved (a higher index), not because a wait
// or a poll interval ran out. The job blocks on a FIFO that the test
// opens once the CLI's first read is answered, so however slowly the CLI
// starts, the job is still running at that read and the end comes
// through a blocking one.
func TestRunWaitsOnTheIndex(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, nil)
	target, err := url.Parse(c.Client(0).Base)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	var open sync.Once
	release := func() {
		open.Do(func() {
			// Opening a FIFO to write waits for its reader, the job.
			go func() {
				if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err == nil {
					_, _ = f.WriteString("go\n")
					_ = f.Close()
				}
			}()
		})
	}
	t.Cleanup(release) // a failed run must not leave the job blocked
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = c.PeerHTTP().Transport
	proxy.FlushInterval = -1 // logs stream through
	jobPath := func(p string) bool {
		rest, ok := strings.CutPrefix(p, "/v1/jobs/")
		_, err := strconv.ParseUint(rest, 10, 64)
		return ok && err == nil
	}
	front := testcluster.FakeAgent(t, c.Token(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !jobPath(r.URL.Path) {
			proxy.ServeHTTP(w, r)
			return
		}
		asked, _ := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
		began := time.Now()
		proxy.ServeHTTP(w, r)
		answered, _ := strconv.ParseUint(w.Header().Get(api.IndexHeader), 10, 64)
		rec.mu.Lock()
		rec.reads = append(rec.reads, jobRead{asked: asked, answered: answered, took: time.Since(began)})
		rec.mu.Unlock()
		release()
	}))
	dir := t.TempDir()
	out, errOut, code := runCLI(t, dir, map[string]string{"SHOAL_ADDR": front.URL, "SHOAL_TOKEN": c.Token()},
		"run", "-n", "1", "--mpi", "none", "--", "sh", "-c", "read go < "+gate+" && echo hello")
	if code != 0 || strings.TrimSpace(out) != "hello" {
		t.Fatalf("shoal run: exit %d, out %q, err %q", code, out, errOut)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reads) < 2 {
		t.Fatalf("shoal run read the job %d times: %+v; want a first read and blocking ones", len(rec.reads), rec.reads)
	}
	for i, r := range rec.reads {
		want := uint64(0)
		if i > 0 {
			want = rec.reads[i-1].answered
		}
		if r.asked != want {
			t.Errorf("read %d asked to wait past %d, want %d (the index of the answer before): %+v", i, r.asked, want, rec.reads)
		}
		if r.answered == 0 || i > 0 && r.answered <= r.asked {
			t.Errorf("read %d answered index %d after asking %d: it ended without a change (a wait or a poll ran out): %+v", i, r.answered, r.asked, rec.reads)
		}
	}
}

// runCLI runs the real CLI in dir with env and returns its output.
func runCLI(t *testing.T, dir string, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testcluster.BuildShoal(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SHOAL_AGENTS_CACHE="+filepath.Join(dir, "agents.json"))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run shoal %v: %v", args, err)
	}
	return so.String(), se.String(), code
}

// TestEventStreamTellsANodesDeath: a node that stops abruptly is told on
// the stream of an agent that sees it go, keyed by its name, with its node
// as the payload. The stream resumes from an index read before the kill,
// so it cannot miss the event however late it connects.
func TestEventStreamTellsANodesDeath(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start, err := c.Client(0).WaitJobs(ctx, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gone := c.Name(2)
	c.Kill(2)
	var seen []string
	err = c.Client(0).Events(ctx, api.EventsQuery{Topics: []string{"node"}, After: start, Resume: true}, func(e api.Event) error {
		seen = append(seen, e.Type+" "+e.Key)
		if e.Type == "reset" {
			return fmt.Errorf("a reset at %d", e.Index)
		}
		if e.Key == gone && e.Type == "dead" {
			var n api.Node
			if err := json.Unmarshal(e.Payload, &n); err != nil || n.Name != gone || n.Status != "dead" {
				return fmt.Errorf("dead event's payload %s (%v)", e.Payload, err)
			}
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("stream: %v; node events seen: %v", err, seen)
	}
}

// TestRunCtrlCKillsTheJob: the first Ctrl-C of `shoal run` kills the job
// and the command exits with 137 once the job is killed, without waiting
// for its program; it wakes from its blocking read to do so.
func TestRunCtrlCKillsTheJob(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, nil)
	dir := t.TempDir()
	cmd := exec.Command(testcluster.BuildShoal(t), "run", "-n", "1", "--mpi", "none", "-J", "ctrl-c", "--", "sleep", "300")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SHOAL_ADDR="+c.Client(0).Base, "SHOAL_TOKEN="+c.Token(),
		"SHOAL_AGENTS_CACHE="+filepath.Join(dir, "agents.json"))
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id uint64
	testcluster.WaitFor(t, time.Minute, "the job to run", func() bool {
		js, err := c.Client(0).JobsWhere(context.Background(), api.JobsQuery{States: []string{"running"}})
		for _, j := range js {
			if err == nil && j.Name == "ctrl-c" {
				id = j.ID
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("shoal run still waits a minute after Ctrl-C\nstderr: %s", se.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 {
		t.Fatalf("shoal run after Ctrl-C: %v, want exit 137\nstderr: %s", err, se.String())
	}
	if j := jobState(c, 0, id); j.State != "killed" {
		t.Fatalf("job %d is %s after Ctrl-C, want killed", id, j.State)
	}
	if !strings.Contains(se.String(), "killing job") {
		t.Errorf("stderr %q does not say the job is being killed", se.String())
	}
}
