package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/nodestate"
)

// rowsBackend is the part of a Backend GET /v1/net reads, for two agents
// of which one is a server: a stand-in that gives the forwarding from a
// client to a server without starting a cluster. Methods it does not
// define panic (the nil Backend).
type rowsBackend struct {
	Backend
	server bool
	rows   []nodestate.NetRow
	peers  map[string]string // server name → base URL
}

func (b *rowsBackend) Nodes() []nodestate.Entry {
	var out []nodestate.Entry
	for _, n := range []string{"a", "b"} {
		out = append(out, nodestate.Entry{HasState: true, Status: nodestate.StatusAlive, State: nodestate.NodeState{Name: n}})
	}
	return out
}
func (b *rowsBackend) NetRows() ([]nodestate.NetRow, bool) { return b.rows, b.server }
func (b *rowsBackend) NetServers() []string {
	var out []string
	for n := range b.peers {
		out = append(out, n)
	}
	return out
}
func (b *rowsBackend) PeerBase(node string) (string, error) { return b.peers[node], nil }
func (b *rowsBackend) PeerClient(base string) *api.Client   { return api.NewClient(base, "tok") }

// startServer serves be as agent "x" with token "tok", closed when t ends.
func startServer(t *testing.T, be Backend) *httptest.Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey = "x", "tok", []byte("k")
	s, err := New(cfg, be)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// TestNetForwardedToServer: GET /v1/net on an agent that is not a server
// answers a server's matrix; with ?forwarded=1 it answers its own (so a
// request never loops); with no server it is a 503.
func TestNetForwardedToServer(t *testing.T) {
	t.Parallel()
	start := func(be Backend) *httptest.Server { return startServer(t, be) }
	srv := start(&rowsBackend{server: true, rows: []nodestate.NetRow{{Node: "a", Cells: []nodestate.NetEntry{{Peer: "b", AvailMbps: 940, BWAt: 1}}}}})
	cli := start(&rowsBackend{peers: map[string]string{"a": srv.URL}})
	ctx := context.Background()
	ps, err := api.NewClient(cli.URL, "tok").Net(ctx)
	if err != nil || len(ps) != 1 || ps[0].From != "a" || ps[0].To != "b" || ps[0].BWMbps == nil || *ps[0].BWMbps != 940 {
		t.Fatalf("forwarded /v1/net: %+v, %v", ps, err)
	}
	var own []api.NetPair
	if err := api.NewClient(cli.URL, "tok").Do(ctx, "GET", "/v1/net?forwarded=1", nil, &own); err != nil || len(own) != 0 {
		t.Fatalf("/v1/net?forwarded=1 on a client: %+v, %v (want its own, empty, matrix)", own, err)
	}
	alone := start(&rowsBackend{})
	if _, err := api.NewClient(alone.URL, "tok").Net(ctx); err == nil || !strings.Contains(err.Error(), "ask a server for the network matrix: no server known") {
		t.Fatalf("a client with no server: %v", err)
	}
}
