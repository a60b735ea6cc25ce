// Package rows carries the network rows to the servers.
//
// A node's row of the network matrix (its RTT and bandwidth to each peer,
// nodestate.NetEntry) grows with the cluster, so it no longer travels in
// gossip, whose push/pull it made O(n²). Instead the owner's Sender sends
// the row, versioned by the owner's boot and a counter (nodestate.NetRow), to
// every server (alive gossip nodes with Raft.Member) over the agents'
// mutual-TLS API (POST /v1/netrow, which a server takes only under the
// owner's own certificate): when it changes, at most once per
// Config.MinInterval per server; at once to a server it has not sent to in
// this server's boot (a new or restarted server); and to every server each
// Config.Refresh. A server that holds an earlier version of this boot's
// row gets a delta (the cells changed and the peers dropped since); any
// other, and every refresh, gets the whole row. Each server keeps a Table
// of the newest row per owner,
// from which the agent fills leader.Node.Net for the leader core and
// answers GET /v1/net.
//
// The loop, in the agent:
//
//	s := rows.NewSender(rows.Deps{...})
//	probes publish their row:  s.Set(cells)
//	go s.Run(ctx)              // sends as above; Table.Put on the servers
//	the leader reads:          table.Get(node)
//	periodically:              table.Prune(now, gossip.Nodes(), grace)
package rows
