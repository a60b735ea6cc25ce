package api_test

import (
	"encoding/json"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/api/apitest"
)

// TestWireKeys pins the JSON keys of every body the HTTP API sends or
// takes: they are a user contract (the CLI's --json prints them) and no
// longer follow the field names of raftfsm or placement. A change shows
// here as a key gone or new; rewrite with -rewrite only on purpose.
func TestWireKeys(t *testing.T) {
	t.Parallel()
	bodies := map[string]any{
		"health":            &api.Health{},
		"error":             &api.Error{},
		"node":              &api.Node{}, // GET /v1/self, and each of GET /v1/nodes
		"member":            &api.Member{},
		"leader":            &api.Leader{},
		"apply_result":      &api.ApplyResult{},
		"submit_request":    &api.SubmitRequest{},
		"submit_response":   &api.SubmitResponse{},
		"job":               &api.Job{}, // GET /v1/jobs/{id}, and each of GET /v1/jobs
		"kill_request":      &api.KillRequest{},
		"kill_response":     &api.KillResponse{},
		"hold_request":      &api.HoldRequest{},
		"hold_response":     &api.HoldResponse{},
		"exec_request":      &api.ExecRequest{},
		"progress_request":  &api.ProgressRequest{},
		"progress_response": &api.ProgressResponse{},
		"net_pair":          &api.NetPair{},
		"probe_info":        &api.ProbeInfo{},
		"alloc_request":     &api.AllocRequest{},
		"alloc_decision":    &api.AllocDecision{},
		"placement":         &api.Placement{},
		"drain_request":     &api.DrainRequest{},
		"drain_status":      &api.DrainStatus{},
		"raft_peer":         &api.RaftPeer{},
		"remove_peer":       &api.RemovePeerRequest{},
		"restore_response":  &api.RestoreResponse{},
		"history_record":    &api.HistoryRecord{},
		"event":             &api.Event{}, // each event of GET /v1/events
		"read_index":        &api.ReadIndex{},
	}
	got := map[string][]string{}
	for name, v := range bodies {
		apitest.Fill(v)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys, err := apitest.Keys(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if bad := apitest.NotSnake(keys); len(bad) > 0 {
			t.Errorf("%s: keys not snake_case: %v", name, bad)
		}
		got[name] = keys
	}
	apitest.Golden(t, "testdata/keys.golden", got)
}
