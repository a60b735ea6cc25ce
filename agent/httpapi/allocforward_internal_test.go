package httpapi

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// allocBackend answers a placement question: one idle node "a", and the
// network model's coverage as given. A stand-in, as rowsBackend.
type allocBackend struct {
	rowsBackend
	coverage, reason string
	wait             bool
	waited           *time.Duration
}

func (b *allocBackend) State() *raftfsm.State { return raftfsm.NewState() }
func (b *allocBackend) PlacementSnapshot(*raftfsm.State) placement.Snapshot {
	return placement.Snapshot{Nodes: []placement.Node{{Name: "a", Alive: true, Cores: 4, Threads: 4}}}
}
func (b *allocBackend) ModelWait(_ *raftfsm.State, _ []string, waited time.Duration) (string, string, bool) {
	*b.waited = waited
	return b.coverage, b.reason, b.wait
}

// TestAllocForwardedAndWaitingForTheModel: POST /v1/alloc on a client
// agent (no network rows) is answered by a server; a network-aware
// policy there waits for the model (model_wait, the reason, how long the
// client waited passed on) unless no_model_wait; other policies do not ask.
func TestAllocForwardedAndWaitingForTheModel(t *testing.T) {
	t.Parallel()
	start := func(be Backend) *httptest.Server { return startServer(t, be) }
	var waited time.Duration
	server := &allocBackend{rowsBackend: rowsBackend{server: true}, coverage: "4 of 10 nodes measured",
		reason: "waiting for the network model: 4 of 10 nodes measured", wait: true, waited: &waited}
	srv := start(server)
	cli := start(&allocBackend{rowsBackend: rowsBackend{peers: map[string]string{"a": srv.URL}}, waited: new(time.Duration)})
	ctx := context.Background()
	c := api.NewClient(cli.URL, "tok")
	d, err := c.Alloc(ctx, api.AllocRequest{NP: 1, ModelWaitedMs: 3000})
	if err != nil || !d.Wait || !d.ModelWait || d.WaitReason != server.reason || waited != 3*time.Second {
		t.Fatalf("cold model: %+v, %v (server saw waited %v)", d, err, waited)
	}
	d, err = c.Alloc(ctx, api.AllocRequest{NP: 1, NoModelWait: true})
	if err != nil || d.Wait || len(d.Hosts) != 1 || d.ModelCoverage != "4 of 10 nodes measured" {
		t.Fatalf("no_model_wait: %+v, %v", d, err)
	}
	d, err = c.Alloc(ctx, api.AllocRequest{NP: 1, Policy: "load"})
	if err != nil || d.Wait || len(d.Hosts) != 1 || d.ModelCoverage != "" {
		t.Fatalf("load policy: %+v, %v", d, err)
	}
	server.wait = false
	if d, err = c.Alloc(ctx, api.AllocRequest{NP: 1}); err != nil || d.Wait || len(d.Hosts) != 1 {
		t.Fatalf("model complete: %+v, %v", d, err)
	}
}
