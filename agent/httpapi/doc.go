// Package httpapi is the agent's HTTP API: the route table, the handlers,
// and who may do what. It speaks agent/api's wire types and converts them
// at this boundary to the raft command schema (raftfsm) and the placement
// package's types, so renaming a field of a pure package changes no user's
// JSON.
//
// Authentication happens here, before any handler runs: over TCP (always
// TLS 1.3) a client certificate of the cluster's CA or the cluster token;
// over the agent's local socket the kernel's word on the sender
// (SO_PEERCRED, ConnContext), who then acts only as themselves (actAs),
// root as anyone. A job's processes hold a job capability (JobCapability)
// that admits them to exec and progress for their own attempt only. An
// agent that is not root takes changes over the socket only from its own
// user (Identity). Limits bounds connections and request time.
//
// Reads take ?index=N&wait=D (blocking.go): they answer when the index
// they count in, the applied raft index for jobs and gossip's change count
// for nodes, passes N (Backend's StateWatch and NodeWatch). GET /v1/events
// (eventstream.go) streams server-sent events that RunEvents
// (eventpump.go) derives from the same state with agent/events, which the
// agent runs as one of its loops.
//
// Reads of jobs answer from the agent's own copy of the replicated state,
// fenced where that copy could answer from the past (readfence.go): a
// miss on a job ID the copy has not assigned, ?consistent and
// ?min_index=N wait for the copy to reach the leader's read index (GET
// /v1/read-index, Backend's ReadIndex) or N, within a bound.
//
// The handlers reach the rest of the agent only through Backend, which the
// agent implements with an adapter over its components (gossip, raft, the
// FSM, the node side of jobs):
//
//	srv := httpapi.New(cfg, backend)
//	hs := &http.Server{Handler: srv.Handler(), ConnContext: httpapi.ConnContext}
package httpapi
