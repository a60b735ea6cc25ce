package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// fenceBackend is an agent whose copy of the state a test holds behind
// the leader's: the leader's read index is lead, and the copy holds the
// jobs the test applied, at the index the test raised it to. A stand-in
// for raft and the agent's replica.
type fenceBackend struct {
	watchBackend
	mu   sync.Mutex
	st   *raftfsm.State
	lead uint64
	// asked hears each read index asked of the leader.
	asked chan struct{}
}

func newFenceBackend(lead uint64) *fenceBackend {
	return &fenceBackend{st: raftfsm.NewState(), lead: lead, asked: make(chan struct{}, 16)}
}

func (b *fenceBackend) State() *raftfsm.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st.Clone()
}
func (b *fenceBackend) Elastic(*raftfsm.Job) *api.Elastic { return nil }
func (b *fenceBackend) ReadIndex(context.Context) (uint64, error) {
	b.asked <- struct{}{}
	return b.lead, nil
}

// apply adds job id to the copy, which then stands at index.
func (b *fenceBackend) apply(id, index uint64) {
	b.mu.Lock()
	b.st.Jobs[id] = &raftfsm.Job{ID: id, Owner: "root", State: raftfsm.StateQueued, Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}}
	b.st.NextJobID = max(b.st.NextJobID, id+1)
	b.mu.Unlock()
	b.state.Raise(index)
}

// startFenced serves be with requests bounded by timeout.
func startFenced(t *testing.T, be Backend, timeout time.Duration) *httptest.Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey = "x", "tok", []byte("k")
	cfg.HTTP.RequestTimeout = timeout
	s, err := New(cfg, be)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// TestReadOfAJobTheCopyHasNotSeenWaitsForIt: an agent whose copy is
// behind, asked for a job ID it has not assigned, asks the leader's read
// index and answers the job once its copy holds it, not "no job".
func TestReadOfAJobTheCopyHasNotSeenWaitsForIt(t *testing.T) {
	t.Parallel()
	be := newFenceBackend(9)
	be.apply(1, 4)
	srv := startFenced(t, be, time.Minute)
	type answer struct {
		code int
		body string
	}
	done := make(chan answer, 1)
	go func() {
		resp, body := get(t, srv.URL+"/v1/jobs/2")
		done <- answer{resp.StatusCode, body}
	}()
	select {
	case <-be.asked:
	case a := <-done:
		t.Fatalf("job 2 answered %d %q without asking the leader's read index", a.code, a.body)
	}
	select {
	case a := <-done:
		t.Fatalf("job 2 answered %d %q before the copy reached the leader's read index", a.code, a.body)
	default:
	}
	be.apply(2, 9)
	a := <-done
	var j api.Job
	if err := json.Unmarshal([]byte(a.body), &j); a.code != http.StatusOK || err != nil || j.ID != 2 {
		t.Fatalf("job 2 after the copy caught up: %d %q, want the job", a.code, a.body)
	}
}

// TestReadOfAMissingJobIsFinalAfterTheFence: an ID the copy has assigned
// and no longer holds is a 404 at once, without asking the leader; one
// beyond it a 404 once the copy has reached the leader's read index; and
// a copy that cannot reach it within the bound a 503 of one line that
// sends the reader elsewhere.
func TestReadOfAMissingJobIsFinalAfterTheFence(t *testing.T) {
	t.Parallel()
	be := newFenceBackend(4)
	be.apply(3, 4)
	srv := startFenced(t, be, time.Minute)
	if resp, body := get(t, srv.URL+"/v1/jobs/2"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "no job 2") {
		t.Fatalf("job 2, assigned and gone: %d %q, want 404", resp.StatusCode, body)
	}
	select {
	case <-be.asked:
		t.Fatal("a miss below the next job ID asked the leader for its read index")
	default:
	}
	if resp, body := get(t, srv.URL+"/v1/jobs/7"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "no job 7") {
		t.Fatalf("job 7, which the leader does not have either: %d %q, want 404", resp.StatusCode, body)
	}
	select {
	case <-be.asked:
	default:
		t.Fatal("job 7 answered 404 without asking the leader's read index")
	}

	behind := newFenceBackend(20)
	behind.apply(3, 4)
	slow := startFenced(t, behind, 300*time.Millisecond)
	resp, body := get(t, slow.URL+"/v1/jobs/5")
	var e api.Error
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != http.StatusServiceUnavailable ||
		!strings.Contains(e.Error, "cannot tell whether job 5 exists") || !strings.Contains(e.Error, "at index 4, short of 20") || strings.Contains(e.Error, "\n") {
		t.Fatalf("job 5 on a copy that cannot catch up: %d %q, want a 503 of one line saying how far behind", resp.StatusCode, body)
	}
}

// TestMinIndexAndConsistentReads: ?min_index=N waits for the copy to
// apply N; ?consistent waits for the leader's read index even for a job
// the copy holds; each answers from the state it waited for (its
// X-Shoal-Index); a bad min_index is refused in one line.
func TestMinIndexAndConsistentReads(t *testing.T) {
	t.Parallel()
	be := newFenceBackend(12)
	be.apply(1, 4)
	srv := startFenced(t, be, time.Minute)
	queries := []string{"/v1/jobs/1?min_index=12", "/v1/jobs/1?consistent=1", "/v1/jobs?consistent=1"}
	answers := make(chan string, len(queries))
	for _, q := range queries {
		go func() {
			resp, _ := get(t, srv.URL+q)
			answers <- fmt.Sprintf("%s: %d at index %s", q, resp.StatusCode, resp.Header.Get(api.IndexHeader))
		}()
	}
	// Once both consistent reads asked, the copy catches up; the min_index
	// read may not have arrived by then, which its answer's index tells.
	// A read that answers early is one answer fewer to wait for.
	left, consistent := len(queries), 2
	for asked := 0; asked < consistent; {
		select {
		case <-be.asked:
			asked++
		case a := <-answers:
			t.Errorf("%s before the copy caught up (it was at 4)", a)
			if left--; strings.Contains(a, "consistent") {
				consistent--
			}
		}
	}
	be.apply(1, 12)
	for range left {
		if a := <-answers; !strings.HasSuffix(a, ": 200 at index 12") {
			t.Errorf("%s, want 200 at index 12 (the copy was at 4)", a)
		}
	}
	resp, body := get(t, srv.URL+"/v1/jobs/1?min_index=soon")
	oneLineRefusal(t, "min_index=soon", resp, body)
}
