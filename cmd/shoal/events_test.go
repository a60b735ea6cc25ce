package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/api/apitest"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestEventsPrintsAndResumes: `shoal events --json` prints one object per
// event, skips keepalives, and when the stream ends reconnects with the
// index of the last event it printed; an agent's refusal ends it. The
// agent is a stand-in that scripts three connections.
func TestEventsPrintsAndResumes(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	var mu sync.Mutex
	var asked []string
	token := testcluster.NewToken(t)
	job := filled[api.Job]()
	payload, _ := json.Marshal(job)
	event := func(w http.ResponseWriter, index uint64, typ string) {
		e := api.Event{Index: index, Topic: "job", Type: typ, Key: fmt.Sprint(job.ID), Payload: payload}
		b, _ := json.Marshal(e)
		fmt.Fprintf(w, "id: %d\nevent: job\ndata: %s\n\n", index, b)
	}
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.RawQuery)
		n := len(asked)
		mu.Unlock()
		if r.URL.Path != "/v1/events" {
			http.NotFound(w, r)
			return
		}
		switch n {
		case 1:
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, 5, "submitted")
			fmt.Fprint(w, ": keepalive\n\n")
			event(w, 7, "placed")
		case 2:
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, 9, "ended")
		default:
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(api.Error{Error: "no more"})
		}
	}))
	env := map[string]string{"SHOAL_ADDR": srv.URL, "SHOAL_TOKEN": token}
	out, errOut, code := shoal(t, env, "events", "--json", "--topic", "job,attempt")
	if code == 0 || !strings.Contains(errOut, "no more") {
		t.Fatalf("events: exit %d, stderr %q: want the agent's refusal to end it", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("printed %d lines, want 3 events:\n%s", len(lines), out)
	}
	for i, want := range []uint64{5, 7, 9} {
		var e api.Event
		if err := json.Unmarshal([]byte(lines[i]), &e); err != nil || e.Index != want || e.Topic != "job" {
			t.Fatalf("line %d = %s (%v), want the event at %d", i, lines[i], err, want)
		}
		keys, err := apitest.Keys([]byte(lines[i]))
		if err != nil {
			t.Fatal(err)
		}
		if bad := apitest.NotSnake(keys); len(bad) > 0 {
			t.Errorf("keys not snake_case: %v", bad)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"topic=job%2Cattempt", "index=7&topic=job%2Cattempt", "index=9&topic=job%2Cattempt"}
	if strings.Join(asked, " ") != strings.Join(want, " ") {
		t.Fatalf("queries %q, want %q: a reconnect resumes after the last event printed", asked, want)
	}
	if !strings.Contains(errOut, "reconnecting after index 7") {
		t.Errorf("stderr %q does not say where it resumes", errOut)
	}
}

func TestEventsBadTopic(t *testing.T) {
	_, errOut, code := shoal(t, map[string]string{"SHOAL_ADDR": "https://127.0.0.1:1", "SHOAL_TOKEN": "x"}, "events", "--topic", "jobs")
	if code != exitUsage {
		t.Fatalf("--topic jobs: exit %d, want %d", code, exitUsage)
	}
	oneLine(t, "--topic jobs", errOut)
}
