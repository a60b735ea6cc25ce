// Package agent wires one shoal node together: gossip of observed state,
// the raft group that holds desired state, the samplers that measure the
// node, and the authenticated HTTP API that the CLI and other agents call.
//
// It holds no algorithms. Decisions (placement, membership changes, probe
// schedules) come from pure functions in other packages, and the agent
// only carries them out. The raft leader's decisions are package leader's
// (see its doc for the loop: gossip and FSM in, leader core, commands
// out, raft, node reconcilers, processes); leading.go runs it:
//
//	a, err := agent.New(cfg)        // binds every port, starts nothing yet
//	err = a.Start(ctx)              // gossip, samplers, raft, HTTP
//	...
//	a.Shutdown(agent.Graceful)      // leave gossip, step down, close stores
//
// Every agent is a raft member: up to Config.Voters voters, every other
// node a non-voter, so that every node can answer reads locally. Writes are
// forwarded to the leader over the HTTP API with the cluster token.
package agent
