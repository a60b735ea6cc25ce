package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/agent/replica"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// replicaSet is the clients' side of the servers-and-clients layout: a replication feed
// on every raft server (agent/replica.Feed, fed by the server FSM's
// Applied and Restored as raftnode's OnApply and OnRestore do) and one
// replica.Follower per client, each with its own raftfsm.FSM. The
// follower's stream is an in-process pipe to the server's Feed.Serve
// instead of GET /v1/replicate over HTTPS: the same bytes, frames and
// push, without a thousand TLS connections (the boundary, as gossip's
// MockNetwork is).
type replicaSet struct {
	feeds     []*replica.Feed
	followers []*replica.Follower
	sent      atomic.Int64 // bytes the feeds wrote to followers
	cancel    context.CancelFunc
}

// feedKeep is how many entries each feed keeps, as the agent's.
const feedKeep = 4096

func newReplicaSet(servers int) *replicaSet {
	rs := &replicaSet{}
	for range servers {
		rs.feeds = append(rs.feeds, replica.NewFeed(feedKeep))
	}
	return rs
}

// hook wires server i's FSM to its feed.
func (rs *replicaSet) hook(i int, f *hookedFSM) {
	f.applied, f.restored = rs.feeds[i].Applied, rs.feeds[i].Restored
}

// countingWriter counts the bytes a feed streams.
type countingWriter struct {
	io.Writer
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	k, err := w.Writer.Write(p)
	w.n.Add(int64(k))
	return k, err
}

// pipeStream is the follower's end of one stream; closing it ends the
// server's Serve.
type pipeStream struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (p *pipeStream) Close() error {
	p.cancel()
	return p.PipeReader.Close()
}

// open is every follower's replica.OpenFunc: it serves server's feed of
// that server's FSM into a pipe.
func (rs *replicaSet) open(rc *raftCluster) replica.OpenFunc {
	idx := map[string]int{}
	for i, s := range rc.servers {
		idx[s.name] = i
	}
	return func(ctx context.Context, server string, after uint64) (io.ReadCloser, error) {
		i, ok := idx[server]
		if !ok {
			return nil, fmt.Errorf("open replica stream: %q is no server", server)
		}
		pr, pw := io.Pipe()
		sctx, cancel := context.WithCancel(ctx)
		go func() {
			err := rs.feeds[i].Serve(sctx, rc.servers[i].fsm.FSM, after, countingWriter{pw, &rs.sent}, nil)
			if err == nil {
				err = io.EOF
			}
			pw.CloseWithError(err)
		}()
		return &pipeStream{PipeReader: pr, cancel: cancel}, nil
	}
}

// start runs one follower per client name, each applying to its own FSM
// and waking its observer, and waits until every one has caught up with a
// server once (Follower.Ready).
func (rs *replicaSet) start(rc *raftCluster, clients []string, observers map[string]*observer, timeout time.Duration) error {
	ctx, cancel := context.WithCancel(context.Background())
	rs.cancel = cancel
	names := make([]string, len(rc.servers))
	for i, s := range rc.servers {
		names[i] = s.name
	}
	servers := func() []string { return names }
	open := rs.open(rc)
	for _, name := range clients {
		fsm := raftfsm.New()
		o := newObserver(name, fsm)
		observers[name] = o
		f, err := replica.Start(ctx, replica.Config{FSM: fsm, Wake: []chan struct{}{o.wake}, Servers: servers, Open: open})
		if err != nil {
			return fmt.Errorf("start replica of %s: %w", name, err)
		}
		rs.followers = append(rs.followers, f)
	}
	deadline := time.After(timeout)
	for i, f := range rs.followers {
		select {
		case <-f.Ready():
		case <-deadline:
			return fmt.Errorf("replica of %s: not caught up after %v (%d of %d were)", clients[i], timeout, i, len(clients))
		}
	}
	return nil
}

// stop ends every follower and stream.
func (rs *replicaSet) stop() {
	if rs.cancel != nil {
		rs.cancel()
	}
	for _, f := range rs.followers {
		f.Stop()
	}
}
