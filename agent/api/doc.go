// Package api holds the JSON types of the agent's HTTP API and a client for
// it. The CLI and agents (when forwarding to the leader) both use it.
//
// Over TCP every endpoint except GET /v1/health needs the cluster token:
//
//	c := api.NewClient("http://127.0.0.1:7948", token)
//	nodes, err := c.Nodes(ctx)
//
// Over the agent's local socket no token is needed: the agent learns the
// caller's uid from the kernel, and the caller acts as that user.
//
//	c := api.NewClient("unix:///var/lib/shoal/shoal.sock", "")
package api
