package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// election is what three agents believe about who leads while leadership
// moves from a to b: b already leads, the follower f still names a, and
// each step of the election happens as a request meets it, so the test
// needs no clock.
type election struct {
	mu       sync.Mutex
	believed string // whom f's raft names as leader; "" while it knows none
	sawNone  bool   // f found no leader at least once
	aDown    bool   // a has crashed: f's raft names it once more, then no one
	bases    map[string]string
}

// electionBackend is one of the agents; methods it does not define panic
// (the nil Backend).
type electionBackend struct {
	Backend
	name    string
	e       *election
	asked   atomic.Int32 // requests that reached this agent's leadership check
	refuse  error        // what RemovePeer answers on the leader
	removed atomic.Int32
}

func (b *electionBackend) Leader() (string, string) {
	b.e.mu.Lock()
	defer b.e.mu.Unlock()
	l := b.e.believed
	if l == "a" && b.e.aDown {
		b.e.believed = "" // the heartbeat timeout passes: an election starts
	}
	if l == "" {
		b.e.sawNone, b.e.believed = true, "b" // the election ends: b is heard from
	}
	return l, ""
}

func (b *electionBackend) IsLeader() bool {
	if b.name == "a" {
		b.asked.Add(1)
		b.e.mu.Lock()
		b.e.believed = "" // a has stepped down; f's raft now knows no leader
		b.e.mu.Unlock()
	}
	return b.name == "b"
}

func (b *electionBackend) PeerBase(node string) (string, error) {
	b.e.mu.Lock()
	defer b.e.mu.Unlock()
	if base, ok := b.e.bases[node]; ok {
		return base, nil
	}
	return "", errors.New("unknown peer " + node)
}

func (b *electionBackend) PeerClient(base string) *api.Client { return api.NewClient(base, "tok") }

func (b *electionBackend) RemovePeer(context.Context, string) error {
	b.removed.Add(1)
	return b.refuse
}

func startElection(t *testing.T, refuse error) (f *api.Client, agents map[string]*electionBackend, e *election) {
	e = &election{believed: "a", bases: map[string]string{}}
	agents = map[string]*electionBackend{}
	for _, n := range []string{"a", "b", "f"} {
		be := &electionBackend{name: n, e: e, refuse: refuse}
		agents[n] = be
		e.bases[n] = startServer(t, be).URL
	}
	return api.NewClient(e.bases["f"], "tok"), agents, e
}

// TestForwardToLeaderHoldsThroughAnElection: an operator's write sent to
// a follower reaches the old leader just after it stepped down ("not the
// raft leader"), then finds no leader while the election runs; the
// follower keeps forwarding until the new leader takes it, once.
func TestForwardToLeaderHoldsThroughAnElection(t *testing.T) {
	t.Parallel()
	f, agents, e := startElection(t, nil)
	err := f.Do(context.Background(), "POST", "/v1/operator/raft/remove-peer", map[string]string{"id": "gone"}, nil)
	if err != nil {
		t.Fatalf("remove-peer through a follower during an election: %v", err)
	}
	if agents["a"].asked.Load() == 0 || !e.sawNone {
		t.Fatalf("the request did not meet the election (old leader asked %d times, no leader seen %v)", agents["a"].asked.Load(), e.sawNone)
	}
	if n := agents["b"].removed.Load(); n != 1 {
		t.Fatalf("the new leader removed the peer %d times, want once", n)
	}
}

// TestForwardToLeaderPassesRefusalsOn: what the leader itself answers is
// the answer; only a missing or moved leader is retried.
func TestForwardToLeaderPassesRefusalsOn(t *testing.T) {
	t.Parallel()
	f, agents, e := startElection(t, errors.New("no peer gone in the configuration"))
	e.mu.Lock()
	e.believed = "b"
	e.mu.Unlock()
	err := f.Do(context.Background(), "POST", "/v1/operator/raft/remove-peer", map[string]string{"id": "gone"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no peer gone in the configuration") {
		t.Fatalf("remove-peer the leader refuses: %v, want its refusal", err)
	}
	if n := agents["b"].removed.Load(); n != 1 {
		t.Fatalf("the leader was asked %d times, want once", n)
	}
}

// TestForwardToLeaderHoldsThroughACrashedLeader: the usual election
// starts with the leader dead while raft still names it; the forward
// cannot connect, nothing was sent, and it is held until the new leader
// takes it.
func TestForwardToLeaderHoldsThroughACrashedLeader(t *testing.T) {
	t.Parallel()
	f, agents, e := startElection(t, nil)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // a's address, where nothing listens any more
	e.mu.Lock()
	e.aDown, e.bases["a"] = true, dead.URL
	e.mu.Unlock()
	err := f.Do(context.Background(), "POST", "/v1/operator/raft/remove-peer", map[string]string{"id": "gone"}, nil)
	if err != nil {
		t.Fatalf("remove-peer through a follower while the leader is dead: %v", err)
	}
	if !e.sawNone {
		t.Fatal("the request did not meet the election")
	}
	if n := agents["b"].removed.Load(); n != 1 {
		t.Fatalf("the new leader removed the peer %d times, want once", n)
	}
}

// silentLeader is a follower's view of a leader that takes connections
// and never answers: a paused process, or one hung on its disk, whose
// kernel still accepts.
type silentLeader struct {
	Backend
	base string
}

func (b *silentLeader) IsLeader() bool                     { return false }
func (b *silentLeader) Leader() (string, string)           { return "a", "" }
func (b *silentLeader) PeerBase(string) (string, error)    { return b.base, nil }
func (b *silentLeader) PeerClient(base string) *api.Client { return api.NewClient(base, "tok") }

// TestForwardToLeaderBoundsAnUnansweredAttempt: a leader that accepts the
// forwarded write and never answers costs the operator the hold, not the
// peer client's 30 s, and the answer says the write may still happen
// (not a 503, which a client would send again to another agent).
func TestForwardToLeaderBoundsAnUnansweredAttempt(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read nor answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	f := api.NewClient(startServer(t, &silentLeader{base: "http://" + ln.Addr().String()}).URL, "tok")
	f.HTTP.Timeout = time.Minute // the follower's answer, not this client, ends the request

	start := time.Now()
	err = f.Do(context.Background(), "POST", "/v1/operator/raft/remove-peer", map[string]string{"id": "gone"}, nil)
	took := time.Since(start)
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusGatewayTimeout || !strings.Contains(se.Msg, "may still carry it out") {
		t.Fatalf("remove-peer through a follower to a silent leader: %v after %v, want a 504 saying it may still happen", err, took)
	}
	// The hold is 7 s; the peer client's own timeout, 30 s, is what an
	// unbounded attempt waits. Between the two, room for a loaded machine.
	if took < leaderHold || took > leaderHold+15*time.Second {
		t.Fatalf("answered after %v, want the hold (%v)", took, leaderHold)
	}
}
