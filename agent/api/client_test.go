package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A client whose agent is down moves to a fallback that answers, from
// several goroutines at once (shoal run polls and streams together), and
// says ErrNoAgent when none answers, or the 503 when one had no leader.
func TestClientFallbacks(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"name":"n1"}`))
	}))
	defer up.Close()
	noLeader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"no raft leader right now"}`))
	}))
	defer noLeader.Close()
	dead := "http://127.0.0.1:1"

	c := NewClient(dead, "tok")
	c.Fallbacks = []string{noLeader.URL, up.URL}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Leader(context.Background()); err != nil {
				t.Errorf("with a live fallback: %v", err)
			}
		}()
	}
	wg.Wait()
	if c.Addr() != up.URL {
		t.Fatalf("base is %s, want the agent that answered, %s", c.Addr(), up.URL)
	}

	c = NewClient(dead, "tok")
	c.Fallbacks = []string{"http://127.0.0.1:2"}
	if _, err := c.Leader(context.Background()); !errors.Is(err, ErrNoAgent) {
		t.Fatalf("none reachable: %v, want ErrNoAgent", err)
	}
	if c := NewClient(dead, "tok"); !errors.Is(func() error { _, err := c.Leader(context.Background()); return err }(), ErrNoAgent) {
		t.Fatal("a lone unreachable agent is not ErrNoAgent")
	}
	c = NewClient(dead, "tok")
	c.Fallbacks = []string{noLeader.URL}
	var se *StatusError
	if _, err := c.Leader(context.Background()); !errors.As(err, &se) || se.Code != 503 {
		t.Fatalf("only a leaderless agent: %v, want its 503", err)
	}
}
