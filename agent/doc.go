// Package agent wires one shoal node together: gossip of observed state,
// the raft group that holds desired state, the leader core that decides,
// the node's reconcilers that carry decisions out, and the authenticated
// HTTP API that the CLI and other agents call.
//
//	a, err := agent.New(cfg)        // binds every port, starts nothing yet
//	err = a.Start(ctx)              // gossip, raft, HTTP, reconcilers, leader loop
//	...
//	a.Shutdown(agent.Graceful)      // step down, leave gossip, close stores
//
// It holds no algorithms and makes no decisions: it builds the rooms below
// from explicit parts, converts between their types, and runs their loops.
// The whole loop: observed state in, the leader core's decisions out
// through raft, every node's reconcilers making its processes match.
//
//	gossip (package gossip: nodes,         raft FSM (raftfsm: jobs, attempts,
//	liveness, samples, beats); the         probe generations, duties, limits)
//	servers' row table (agent/rows: links)
//	            │                                       │
//	            └──────► leading.go, on the leader: View + Book
//	                                  │
//	                                  ▼
//	                leader core (package leader, pure): Schedule,
//	                Probes, CollectJobs, Membership
//	                                  │ commands + the next Book
//	                                  ▼
//	CLI, agents ──► agent/httpapi ──► applier (apply.go) ──► raft (agent/raftnode)
//	                                  ▲                          │ applied on every node
//	                                  │                          ▼
//	                                  │          ┌───────────────┴──────────────┐
//	                                  │          ▼                              ▼
//	                                  │   agent/jobrun: reserve,        agent/probes: probe
//	                                  │   launch, kill, sweep           server, relaunch, duties
//	                                  │          │ agent/jobexec                │ agent/probes/child
//	                                  │          ▼                              ▼
//	                                  │   job processes (MPI ranks)     probe processes
//	                                  │          │                              │ beats; links
//	                                  └── acks, exits, progress                 └──► gossip; rows to servers
//
// The rooms, each behind small interfaces or explicit dependencies, none
// holding the agent:
//
//   - package leader: the leader's decisions as pure functions of a View
//     and a Book; leading.go builds the View from raft, the FSM and gossip,
//     proposes what comes back and feeds raft's answers into the next Book.
//   - agent/raftnode: raft over boltdb and a mutual-TLS stream layer, the
//     notifying FSM, the self-bootstrap from gossip (raft.go starts it).
//   - agent/jobrun: the node side of jobs, the reconciler, launcher,
//     executor and sweep (jobnode.go builds its Deps); agent/jobexec is the
//     helper that starts a job process as its owner.
//   - agent/probes: the node side of the network probes; agent/probes/child
//     is the body of `shoal probe` and links nothing of the agent
//     (probing.go starts it).
//   - agent/rows: network rows to the servers (the owner's Sender, a
//     server's Table); netrows.go wires it, leading.go reads it.
//   - agent/httpapi: the HTTP API, its handlers and authentication, behind
//     httpapi.Backend (httpbackend.go adapts the components to it,
//     httpserver.go serves it and runs its event pump, and raises the
//     applied index blocking reads wait on); agent/api holds its wire types
//     and client; agent/events the event stream's diffs and ring.
//
// And the agent's own components, shared by whichever room needs them:
// peers (peers.go: other agents' addresses and mutual-TLS clients), the
// applier (apply.go: Apply forwards writes to the leader, with
// read-your-writes), the progress reporter (elastic_progress.go), the
// elastic settings (elastic.go), the TLS state (tls.go) and the loops
// Shutdown waits for (loops.go). What remains on *Agent is New, Start,
// Shutdown, the start* steps that wire the above, and accessors.
//
// A few agents are raft servers (Config.Servers: the Config.Voters voters
// and warm-standby non-voters); every other agent is a client that follows
// the replicated state from a server (agent/replica) into its own FSM, so
// that every node answers reads locally and runs its reconcilers on the
// same state. roles.go chooses the roles, autopilot.go runs
// hashicorp/raft-autopilot on the leader. Writes are forwarded to the
// leader over the HTTP API with mutual TLS.
package agent
