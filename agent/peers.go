package agent

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/gossip"
)

// peers reaches other agents' APIs: their addresses as gossip knows them,
// clients over the agent's mutual TLS (tlsState.peer). Forwarded writes,
// the job node and the HTTP API's proxies share it.
type peers struct {
	gossip *gossip.Gossip
	// transport is the agent-to-agent transport: mutual TLS, connections
	// kept alive and reused.
	transport *http.Transport
	// stream reaches other agents for streams (logs, exec) that last as
	// long as their job: no client timeout.
	stream *http.Client
}

func newPeers(g *gossip.Gossip, transport *http.Transport) *peers {
	return &peers{gossip: g, transport: transport, stream: &http.Client{Transport: transport}}
}

// addrOf finds a node's API address through gossip.
func (p *peers) addrOf(name string) (string, error) {
	e, ok := p.gossip.Node(name)
	if !ok || !e.HasState || e.State.HTTPPort == 0 {
		return "", fmt.Errorf("node %q: no address known in gossip", name)
	}
	return "https://" + net.JoinHostPort(e.State.Addr, strconv.Itoa(e.State.HTTPPort)), nil
}

// client is a client for another agent's API: mutual TLS, no token.
func (p *peers) client(base string) *api.Client {
	return &api.Client{Base: base, HTTP: &http.Client{Timeout: 30 * time.Second, Transport: p.transport}}
}
