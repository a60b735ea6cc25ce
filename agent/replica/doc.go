// Package replica gives agents that are not raft members (clients) a
// read-only copy of the replicated state, a *raftfsm.FSM fed by a push
// stream from a server, so every reader of the FSM (the job reconciler,
// the HTTP reads, the applier's read-your-writes wait on FSM.Index) works
// unchanged on a client.
//
// Server side, a Feed keeps a bounded ring of the command entries its
// raft node applied (fed by raftnode.Config.OnApply and OnRestore) and
// Serve streams them to one follower: a snapshot frame first when the
// follower is older than the ring covers, then every entry as it is
// applied (push: no polling interval), and heartbeats when idle.
//
//	feed := replica.NewFeed(4096)
//	raftnode.Start(raftnode.Config{..., OnApply: feed.Applied, OnRestore: feed.Restored})
//	// GET /v1/replicate?after=N:
//	feed.Serve(r.Context(), fsm, after, w, flush)
//
// Client side, a Follower keeps one stream open to one of the servers,
// applies what arrives to its FSM with FSM.Apply / FSM.Restore, signals
// its Wake channels, and reconnects elsewhere with capped backoff when
// the stream fails or goes silent, asking for the entries after its own
// index.
//
//	f, err := replica.Start(ctx, replica.Config{FSM: fsm, Wake: wake,
//		Servers: servers, Open: replica.OpenHTTP(client, baseURL)})
//	<-f.Ready() // caught up with a server once
//	...
//	f.Stop()
//
// The stream is a sequence of frames (frame.go): a kind byte, a 4-byte
// big-endian payload length, then the payload (index and term, 8 bytes
// each, then the data). ReadFrame bounds every frame by its kind.
//
// A server streams only while its state is current (Feed.SetHealth; the
// agent passes raftnode.Current: the leader, or a follower that heard from
// one recently), so a server cut off from its leader, or stopped, sends
// its followers elsewhere instead of keeping them on a frozen state.
//
// Cost, measured with `go test -run '^$' -bench Feed -benchtime 200x
// ./agent/replica` on the shared 2-core host (load average ~30, so CPU
// time is the figure; wall time was 10x higher):
//
//	one entry to 1,000 followers (in-process pipes, readers included)  10.8 ms CPU, ~11 µs per follower
//	snapshot of 1,000 running jobs                                      547 KB, 14.6 ms CPU to encode, 25 ms to restore
//
// A far-behind or reconnecting follower costs the server one snapshot
// encoding at most per ring turnover: streams that need one share the
// last one taken while the ring still reaches back to it.
package replica
