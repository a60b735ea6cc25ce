// Package events turns successive views of the cluster into a stream of
// what happened, and keeps the latest of it for clients that reconnect.
//
// The agent does not log events as it applies commands: it compares what
// it saw last with what it sees now (MarkJob, DiffJob; MarkNode,
// DiffNode; MarkProbe, DiffProbe) each time the replicated or the gossiped
// state moves, so the stream is derived from the same state every read
// answers from, on servers and clients alike, and a burst of changes
// between two looks still tells each milestone once (a job that was
// placed, started and ended in between gives placed, started, ended).
//
// Every event carries an index: the raft index of the replicated state it
// was seen in, the index the reads answer in their X-Shoal-Index header.
// A client that read the jobs at index N and then streams from N misses
// nothing. Events seen in one look share one index, and gossip's node and
// probe events, which come between raft entries, share the index of the
// last one: a stream resumed from N therefore sends every event above N
// and the node and probe events at N again (they carry the whole node or
// probe, so a second copy changes nothing).
//
// A Ring keeps the last events (4096 by default) in order with a cursor
// per stream; a stream that falls behind the ring, or asks for an index
// the ring no longer reaches, gets one "reset" event per topic, telling it
// to read that topic's state again.
//
//	ring := events.NewRing(4096)
//	ring.Publish(evs...)                       // the agent, after each look
//	evs, cur, ok := ring.After(n, wanted)      // a stream starting after index n
//	evs, cur, ok = ring.Next(cur, wanted)      // and then each time ring.Changed() fires
//
// The diffs are pure functions of the views they are given, and the
// ring only stores and hands out events.
package events
