// Package api holds the JSON types of the agent's HTTP API and a client for
// it. The CLI and agents (when forwarding to the leader) both use it.
//
// Every endpoint except GET /v1/health needs the cluster token:
//
//	c := api.NewClient("http://127.0.0.1:7948", token)
//	nodes, err := c.Nodes(ctx)
package api
