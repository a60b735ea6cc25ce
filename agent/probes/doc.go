// Package probes is the node side of the network probes: the
// probe server, one probe process per kind kept at the generation raft
// wants, the latency probe's peers, this node's bandwidth duties, and the
// node's samples and heartbeats, published through gossip, and its network
// row, handed to Deps.PublishRow (agent/rows sends it to the servers).
//
// A Manager is built from explicit dependencies (Deps): the gossip layer
// and the replicated state behind small interfaces, the clock, TLS and the
// probe key. It decides nothing for the cluster: the leader orders
// relaunches and bandwidth cycles through raft, and the manager carries
// them out.
//
//	m := probes.New(probes.Deps{Config: cfg, Node: name, Gossip: g, State: fsm, …})
//	m.Start(ctx)        // first sample, probe server
//	go m.Run(ctx)       // the reconciler, the gossip of beats, the row to PublishRow
//	go m.RunDuties(ctx) // this node's bandwidth tests, by the schedule in raft
//	go m.RunLinkChecks(ctx) // a short test of this node's link about every LinkCheck.Interval
//	m.Retune(t)         // SIGHUP: new periods, test size and timeout for the running probes
//
// The probe processes' own body lives in the child package, which does not
// import the agent.
package probes
