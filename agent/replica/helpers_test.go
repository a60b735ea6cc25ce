package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// script draws a log of n real raftfsm commands that mostly fit the state
// they apply to (submit, place, ack, start, finish, fail, kill), with raft
// index gaps where a real log holds configuration and no-op entries. The
// indexes start after from.
func script(t testing.TB, seed uint64, from uint64, n int) []entry {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	ref := raftfsm.New()
	nodes := []string{"a", "b", "c", "d"}
	var out []entry
	idx, req := from, 0
	for range n {
		idx += 1 + uint64(r.IntN(3)/2) // one in three entries leaves a gap
		s := ref.State()
		id := uint64(r.IntN(int(s.NextJobID)) + 1)
		var att int
		node := nodes[r.IntN(len(nodes))]
		if j := s.Jobs[id]; j != nil {
			att = j.Attempt
			if j.State == raftfsm.StateQueued {
				att++
			}
			if a := j.Current(); a != nil && r.IntN(3) > 0 {
				node = a.Hosts[r.IntN(len(a.Hosts))].Node
			}
		}
		var typ string
		var body any
		switch k := r.IntN(20); {
		case k < 5:
			req++
			typ, body = raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: fmt.Sprintf("req-%d", req), Owner: "alice",
				Spec: raftfsm.JobSpec{Cmd: []string{"x", fmt.Sprint(req)}, NP: 4, MaxAttempts: 2}}
		case k < 9:
			a, b := nodes[r.IntN(4)], nodes[r.IntN(4)]
			hosts := []raftfsm.Host{{Node: a, NP: 2}, {Node: b, NP: 2}}
			if a == b {
				hosts = []raftfsm.Host{{Node: a, NP: 4}}
			}
			typ, body = raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: att, Hosts: hosts}
		case k < 13:
			typ, body = raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: att, Node: node}
		case k < 16:
			typ, body = raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: att}
		case k < 18:
			code := r.IntN(2)
			typ, body = raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: att, ExitCode: &code}
		case k < 19:
			typ, body = raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: id, Attempt: att, Reason: "timeout", Retry: true}
		default:
			typ, body = raftfsm.CmdKillJob, raftfsm.KillJob{ID: id, User: "alice"}
		}
		data, err := raftfsm.Encode(typ, t0.Add(time.Duration(idx)*time.Second), body)
		if err != nil {
			t.Fatalf("encode %s: %v", typ, err)
		}
		e := entry{index: idx, term: 1 + idx/100, data: data}
		ref.Apply(&raft.Log{Index: e.index, Term: e.term, Type: raft.LogCommand, Data: e.data})
		out = append(out, e)
	}
	return out
}

// server is a raft server's applying side without raft: its FSM and a
// Feed, fed in the order raftnode's notifying FSM feeds them (the FSM
// first, then the feed). Down ends its streams and refuses new ones.
type server struct {
	name string
	fsm  *raftfsm.FSM
	feed *Feed
	ctx  context.Context
	down context.CancelFunc
	// opened counts the streams opened; hung makes new streams silent.
	mu     sync.Mutex
	opened int
	hung   bool
}

func newServer(t testing.TB, name string, keep int) *server {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &server{name: name, fsm: raftfsm.New(), feed: NewFeed(keep), ctx: ctx, down: cancel}
}

func (s *server) apply(es ...entry) {
	for _, e := range es {
		s.fsm.Apply(&raft.Log{Index: e.index, Term: e.term, Type: raft.LogCommand, Data: e.data})
		s.feed.Applied(e.index, e.term, e.data)
	}
}

// restore replaces the server's state with data, as raft's Restore does.
func (s *server) restore(t testing.TB, data []byte) {
	t.Helper()
	if err := s.fsm.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	s.feed.Restored(s.fsm.Index())
}

// open is an OpenFunc over an in-process pipe.
func (s *server) open(ctx context.Context, after uint64) (io.ReadCloser, error) {
	if s.ctx.Err() != nil {
		return nil, fmt.Errorf("%s is down", s.name)
	}
	s.mu.Lock()
	s.opened++
	hung := s.hung
	s.mu.Unlock()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	go func() {
		defer cancel()
		defer stop()
		if hung {
			<-ctx.Done() // a server that accepted and then froze
			pw.CloseWithError(errors.New("hung server gone"))
			return
		}
		err := s.feed.Serve(ctx, s.fsm, after, pw, nil)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	return pr, nil
}

func (s *server) streams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// pool is a set of servers a follower may follow.
type pool map[string]*server

func (p pool) names() []string {
	var out []string
	for _, n := range []string{"s0", "s1", "s2"} {
		if p[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

func (p pool) open(ctx context.Context, name string, after uint64) (io.ReadCloser, error) {
	s := p[name]
	if s == nil {
		return nil, fmt.Errorf("no server %q", name)
	}
	return s.open(ctx, after)
}

// follow starts a follower of p with short timings, stopped at the end.
func follow(t testing.TB, p pool, fsm *raftfsm.FSM, tweak ...func(*Config)) *Follower {
	t.Helper()
	cfg := Config{FSM: fsm, Servers: p.names, Open: p.open, Pick: func(int) int { return 0 },
		Silence: 2 * time.Second, MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	for _, f := range tweak {
		f(&cfg)
	}
	f, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	return f
}

// waitFor polls cond until it holds or the deadline passes (generous:
// the machine runs many tests at once).
func waitFor(t testing.TB, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			msg := ""
			for _, f := range explain {
				msg += "; " + f()
			}
			t.Fatalf("timed out waiting for %s%s", what, msg)
		}
		time.Sleep(5 * time.Millisecond) // a condition's polling period, not a synchronisation
	}
}

func bytesOf(t testing.TB, f *raftfsm.FSM) string {
	t.Helper()
	b, err := f.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// converged says whether copy holds exactly the server's state.
func converged(t testing.TB, s *server, copy *raftfsm.FSM) bool {
	return copy.Index() == s.fsm.Index() && bytesOf(t, copy) == bytesOf(t, s.fsm)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func itoa(n uint64) string { return fmt.Sprint(n) }
