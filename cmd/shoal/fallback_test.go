package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

// When the CLI's agent is down it tries the others it
// knows (SHOAL_ADDR's list, then the members it cached), retrying writes
// safely, and says "no agent reachable" with exit 3.
func TestCLIFallsBackToAnotherAgent(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.Options{})
	c.WaitLeader(45 * time.Second)
	cache := filepath.Join(t.TempDir(), "agents.json")
	env := func(addr string) map[string]string {
		return map[string]string{"SHOAL_ADDR": addr, "SHOAL_TOKEN": c.Token(), "SHOAL_AGENTS_CACHE": cache}
	}
	jobs := func() int {
		js, err := c.Client(1).Jobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(js)
	}
	dead := "https://127.0.0.1:1"

	// Nothing reachable: exit 3, one line, nothing written.
	_, errOut, code := shoal(t, env(dead), "submit", "-n", "1", "--mpi", "none", "--", "true")
	if code != exitNoLeader || !strings.Contains(errOut, "no agent reachable") {
		t.Fatalf("no agent: exit %d, stderr %q", code, errOut)
	}
	oneLine(t, "no agent", errOut)

	// A list: the first is down, the second takes the write.
	out, errOut, code := shoal(t, env(dead+", "+c.Client(1).Base), "submit", "-n", "1", "--mpi", "none", "--", "sleep", "600")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("listed fallback: exit %d, stderr %q", code, errOut)
	}
	testcluster.WaitFor(t, 10*time.Second, "one job", func() bool { return jobs() == 1 })

	// A write that reached an agent whose answer was lost is retried on the
	// next agent with the same request ID: still one job.
	peer := c.PeerHTTP()
	proxy := testcluster.FakeAgent(t, c.Token(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, c.Client(0).Base+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		if resp, err := peer.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		conn, _, err := w.(http.Hijacker).Hijack() // the agent committed it; its answer never arrives
		if err == nil {
			conn.Close()
		}
	}))
	out, errOut, code = shoal(t, env(proxy.URL+","+c.Client(2).Base), "submit", "-n", "1", "--mpi", "none", "--", "sleep", "601")
	if code != 0 {
		t.Fatalf("retried write: exit %d, stderr %q", code, errOut)
	}
	testcluster.WaitFor(t, 10*time.Second, "two jobs", func() bool { return jobs() == 2 })
	if n := jobs(); n != 2 {
		t.Fatalf("a retried submit made %d jobs, want 2", n)
	}
	if !strings.Contains(out, "2") {
		t.Fatalf("retried submit printed %q, want job 2", out)
	}

	// The member cache: a call through node 0 learns every agent; with node 0
	// down, the same SHOAL_ADDR still works.
	os.Remove(cache)
	if _, errOut, code = shoal(t, env(c.Client(0).Base), "jobs"); code != 0 {
		t.Fatalf("jobs: exit %d, stderr %q", code, errOut)
	}
	b, err := os.ReadFile(cache)
	var ac agentCache
	if err != nil || json.Unmarshal(b, &ac) != nil || len(ac.Agents) != 3 {
		t.Fatalf("cache after a call: %q (%v), want 3 agents", b, err)
	}
	c.Kill(0)
	testcluster.WaitFor(t, 30*time.Second, "a leader among the others", func() bool {
		l, err := c.Client(1).Leader(context.Background())
		return err == nil && l.Name != c.Name(0)
	})
	out, errOut, code = shoal(t, env(c.Client(0).Base), "submit", "-n", "1", "--mpi", "none", "--", "sleep", "602")
	if code != 0 {
		t.Fatalf("cached fallback: exit %d, stderr %q", code, errOut)
	}
	id := strings.TrimSpace(out)
	testcluster.WaitFor(t, 10*time.Second, "job "+id+" via the cached fallback (reads are local: it may lag)", func() bool {
		_, errOut, code = shoal(t, env(c.Client(0).Base), "job", id, "--json")
		return code == 0
	})
}
