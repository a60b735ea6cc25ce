package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/events"
	"github.com/shoal-hpc/shoal/internal/watch"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// watchBackend is rowsBackend (two alive nodes, nothing else) with
// indexes a test raises. A stand-in for the agent's components.
type watchBackend struct {
	rowsBackend
	state, nodes watch.Index
}

func (b *watchBackend) StateWatch() (uint64, <-chan struct{}) { return b.state.Get() }
func (b *watchBackend) NodeWatch() (uint64, <-chan struct{})  { return b.nodes.Get() }
func (b *watchBackend) View(fn func(*raftfsm.State))          { fn(raftfsm.NewState()) }
func (b *watchBackend) ViewAt(fn func(uint64, *raftfsm.State)) {
	i, _ := b.state.Get()
	fn(i, raftfsm.NewState())
}
func (b *watchBackend) Roles() map[string]string { return nil }

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return resp, b.String()
}

// oneLineRefusal checks a 400 whose error is one line.
func oneLineRefusal(t *testing.T, what string, resp *http.Response, body string) {
	t.Helper()
	var e api.Error
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Error == "" || strings.Contains(e.Error, "\n") {
		t.Errorf("%s: %d %q, want a 400 of one line", what, resp.StatusCode, body)
	}
}

// TestBlockingReads: a read with ?index=N answers when the index passes
// N, with the index in X-Shoal-Index; the wait is bounded by ?wait; bad
// values are refused in one line.
func TestBlockingReads(t *testing.T) {
	t.Parallel()
	be := &watchBackend{}
	be.nodes.Raise(4)
	srv := startServer(t, be)
	if resp, _ := get(t, srv.URL+"/v1/nodes"); resp.Header.Get(api.IndexHeader) != "4" {
		t.Fatalf("plain read: index %q, want 4", resp.Header.Get(api.IndexHeader))
	}
	done := make(chan *http.Response)
	go func() {
		resp, _ := get(t, srv.URL+"/v1/members?index=4&wait=1m")
		done <- resp
	}()
	select {
	case resp := <-done:
		t.Fatalf("a read past 4 answered at index 4: %q", resp.Header.Get(api.IndexHeader))
	case <-time.After(200 * time.Millisecond): // only the proof that it did not answer yet
	}
	be.state.Raise(9) // the replicated state moving does not wake a read of the nodes
	be.nodes.Raise(5)
	if resp := <-done; resp.StatusCode != http.StatusOK || resp.Header.Get(api.IndexHeader) != "5" {
		t.Fatalf("woken read: %d, index %q, want 200 at 5", resp.StatusCode, resp.Header.Get(api.IndexHeader))
	}
	// The wait ends the read with the index unchanged.
	start := time.Now()
	if resp, _ := get(t, srv.URL+"/v1/nodes?index=5&wait=50ms"); resp.Header.Get(api.IndexHeader) != "5" || time.Since(start) > 30*time.Second {
		t.Fatalf("bounded wait: index %q after %v", resp.Header.Get(api.IndexHeader), time.Since(start))
	}
	for _, q := range []string{"index=x", "index=1&wait=soon", "index=1&wait=-1s"} {
		resp, body := get(t, srv.URL+"/v1/nodes?"+q)
		oneLineRefusal(t, "?"+q, resp, body)
	}
}

// TestEventStreamRefusesAndKeepsAlive: a bad topic or index is a one-line
// 400; an idle stream gets keepalive comments; without a token, 401.
func TestEventStreamRefusesAndKeepsAlive(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey = "x", "tok", []byte("k")
	cfg.Events.Keepalive = 20 * time.Millisecond
	s, err := New(cfg, &watchBackend{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	for _, q := range []string{"topic=jobs", "index=-1"} {
		resp, body := get(t, srv.URL+"/v1/events?"+q)
		oneLineRefusal(t, "?"+q, resp, body)
	}
	if resp, err := http.Get(srv.URL + "/v1/events"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %v %v, want 401", resp.StatusCode, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || sc.Text() != ": keepalive" {
		t.Fatalf("first line %q (%v), want a keepalive", sc.Text(), sc.Err())
	}
}

// jobsBackend is watchBackend holding jobs 1 and 2.
type jobsBackend struct{ watchBackend }

func (b *jobsBackend) State() *raftfsm.State {
	st := raftfsm.NewState()
	for id := uint64(1); id <= 2; id++ {
		st.Jobs[id] = &raftfsm.Job{ID: id, Owner: "u", State: raftfsm.StateQueued}
	}
	return st
}
func (b *jobsBackend) View(fn func(*raftfsm.State)) { fn(b.State()) }
func (b *jobsBackend) ViewAt(fn func(uint64, *raftfsm.State)) {
	i, _ := b.state.Get()
	fn(i, b.State())
}
func (b *jobsBackend) Elastic(*raftfsm.Job) *api.Elastic { return nil }

// TestJobReadWaitsForItsJob: GET /v1/jobs/1?index=N answers at an event of
// job 1 (or its attempts) above N, not at another job's, nor at a raft
// entry that touches no job.
func TestJobReadWaitsForItsJob(t *testing.T) {
	t.Parallel()
	be := &jobsBackend{}
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey = "x", "tok", []byte("k")
	s, err := New(cfg, be)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	be.state.Raise(10)
	s.events.Start(10)
	done := make(chan *http.Response)
	go func() {
		resp, _ := get(t, srv.URL+"/v1/jobs/1?index=10&wait=1m")
		done <- resp
	}()
	// Whatever the read has reached, none of this may answer it.
	be.state.Raise(11)
	s.events.Publish(events.Event{Index: 11, Topic: events.TopicJob, Type: "placed", Key: "2"},
		events.Event{Index: 10, Topic: events.TopicJob, Type: "updated", Key: "1"}) // seen in the state the client read
	select {
	case resp := <-done:
		t.Fatalf("answered at index %q without an event of job 1 above 10", resp.Header.Get(api.IndexHeader))
	case <-time.After(200 * time.Millisecond): // only the proof that it did not answer yet
	}
	be.state.Raise(12)
	s.events.Publish(events.Event{Index: 12, Topic: events.TopicAttempt, Type: "started", Key: "1/1"})
	if resp := <-done; resp.StatusCode != http.StatusOK || resp.Header.Get(api.IndexHeader) != "12" {
		t.Fatalf("woken read: %d at %q, want 200 at 12", resp.StatusCode, resp.Header.Get(api.IndexHeader))
	}
}

// aheadBackend is watchBackend whose state, as View reads it, is at
// index view (set by the test) with job 1 in state job: the FSM a moment
// before StateWatch is raised to match.
type aheadBackend struct {
	watchBackend
	mu   sync.Mutex
	view uint64
	job  raftfsm.JobState
}

func (b *aheadBackend) State() *raftfsm.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := raftfsm.NewState()
	st.Jobs[1] = &raftfsm.Job{ID: 1, Owner: "u", State: b.job, Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}}
	return st
}
func (b *aheadBackend) View(fn func(*raftfsm.State)) { fn(b.State()) }
func (b *aheadBackend) ViewAt(fn func(uint64, *raftfsm.State)) {
	b.mu.Lock()
	at := b.view
	b.mu.Unlock()
	fn(at, b.State())
}
func (b *aheadBackend) Elastic(*raftfsm.Job) *api.Elastic { return nil }

// TestPumpTellsAChangeAtTheIndexItRead: the pump looks when StateWatch
// rises to 11, but the state it reads is already at 12, where job 1
// ended. A client whose last answer was at 11 (its body read before the
// end was applied) asks to wait past 11: the end is told at 12, so the
// read is answered with the job ended at index 12, not left waiting
// (an event told at 11 would not wake a read past 11).
func TestPumpTellsAChangeAtTheIndexItRead(t *testing.T) {
	t.Parallel()
	be := &aheadBackend{view: 10, job: raftfsm.StateRunning}
	be.state.Raise(10)
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey = "x", "tok", []byte("k")
	s, err := New(cfg, be)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	// The pump's first look, which only remembers, then its look at the
	// rise to 11.
	p := &pump{s: s, jobs: map[uint64]events.JobMark{}, nodes: map[string]*events.NodeMark{}, probes: map[string]events.ProbeMark{}}
	p.lookJobs(10)
	p.primed = true
	s.events.Start(10)
	be.mu.Lock()
	be.view, be.job = 12, raftfsm.StateDone
	be.mu.Unlock()
	be.state.Raise(11)
	p.lookJobs(11)
	resp, body := get(t, srv.URL+"/v1/jobs/1?index=11&wait=5s")
	var j api.Job
	if err := json.Unmarshal([]byte(body), &j); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("read: %d %q (%v)", resp.StatusCode, body, err)
	}
	if idx := resp.Header.Get(api.IndexHeader); idx != "12" || j.State != "done" {
		t.Fatalf("read past 11: job %s at index %q, want done at 12", j.State, idx)
	}
}
