package testcluster

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
)

// TestProcClientReusesConnections: a caller that polls an agent through
// Client(i) over and over uses a connection or two, not one per call. An
// agent caps the connections of one source (256 by default) and keeps an
// idle one for a minute, so a connection per poll locks the poller out
// for that minute.
func TestProcClientReusesConnections(t *testing.T) {
	t.Parallel()
	tok := NewToken(t)
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := FakeAgent(t, tok, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	p := &ProcCluster{Token: tok, Nodes: []ProcNode{{Name: "node1", HTTPPort: port}}}
	const polls = 50
	for range polls {
		if _, err := p.Client(0).Members(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) > 2 {
		t.Fatalf("%d polls opened %d connections: Client must reuse its client's connections", polls, len(conns))
	}
}
