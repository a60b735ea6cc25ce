// Package api holds the JSON types of the agent's HTTP API and a client for
// it. The CLI and agents (when forwarding to the leader) both use it.
//
// Over TCP the API speaks only TLS 1.3, and every endpoint except GET
// /v1/health needs a client certificate of the cluster's CA or the cluster
// token (sent inside TLS); tlsca.ClientConfig builds tlsConfig:
//
//	c := api.NewTLSClient("https://127.0.0.1:7948", token, tlsConfig)
//	nodes, err := c.Nodes(ctx)
//
// Over the agent's local socket no token is needed: the agent learns the
// caller's uid from the kernel, and the caller acts as that user.
//
//	c := api.NewClient("unix:///var/lib/shoal/shoal.sock", "")
package api
