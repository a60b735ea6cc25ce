package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/api/apitest"
	"github.com/shoal-hpc/shoal/testcluster"
)

// filled is a wire value with every field set, so every key shows.
func filled[T any]() T {
	var v T
	apitest.Fill(&v)
	return v
}

// TestJSONKeysPinned runs every listing that prints JSON against an agent
// whose answers fill every field, and pins the keys the CLI prints: they are
// a user contract, snake_case, and follow no pure package's field names.
// Rewrite testdata/json_keys.golden with -rewrite only on purpose.
func TestJSONKeysPinned(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	// alloc asks again while the agent answers model_wait (the network
	// model is not there yet); the answer it prints never has it.
	allocAnswer := filled[api.AllocDecision]()
	allocAnswer.ModelWait = false
	answers := map[string]any{
		"/v1/nodes":               []api.Node{filled[api.Node]()},
		"/v1/members":             []api.Member{filled[api.Member]()},
		"/v1/leader":              filled[api.Leader](),
		"/v1/net":                 []api.NetPair{filled[api.NetPair]()},
		"/v1/probes":              []api.ProbeInfo{filled[api.ProbeInfo]()},
		"/v1/jobs":                []api.Job{filled[api.Job]()},
		"/v1/jobs/1":              filled[api.Job](),
		"/v1/alloc":               allocAnswer,
		"/v1/nodes/n1/drain":      filled[api.DrainStatus](),
		"/v1/nodes/n1/undrain":    filled[api.DrainStatus](),
		"/v1/operator/raft/peers": []api.RaftPeer{filled[api.RaftPeer]()},
		"/v1/history":             []api.HistoryRecord{filled[api.HistoryRecord]()},
	}
	token := testcluster.NewToken(t)
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(v)
	}))
	env := map[string]string{"SHOAL_ADDR": srv.URL, "SHOAL_TOKEN": token}
	listings := map[string][]string{
		"nodes":      {"nodes", "--json"},
		"members":    {"members", "--json"},
		"leader":     {"leader", "--json"},
		"net":        {"net", "--json"},
		"probes":     {"probes", "--json"},
		"jobs":       {"jobs", "--json"},
		"job":        {"job", "--json", "1"},
		"alloc":      {"alloc", "-n", "1", "--format", "json"},
		"drain":      {"node", "drain", "--json", "n1"},
		"undrain":    {"node", "undrain", "--json", "n1"},
		"list-peers": {"operator", "raft", "list-peers", "--json"},
		"history":    {"history", "--json"},
		"export":     {"export", "slurm-topology", "--json"},
	}
	got := map[string][]string{}
	for name, args := range listings {
		out, errOut, code := shoal(t, env, args...)
		// The filled alloc answer says wait: alloc prints it, then exits 4.
		if code != 0 && !(name == "alloc" && code == exitWait) {
			t.Fatalf("shoal %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		keys, err := apitest.Keys([]byte(out))
		if err != nil {
			t.Fatalf("shoal %s: %v:\n%s", strings.Join(args, " "), err, out)
		}
		if bad := apitest.NotSnake(keys); len(bad) > 0 {
			t.Errorf("shoal %s prints keys that are not snake_case: %v", strings.Join(args, " "), bad)
		}
		got[name] = keys
	}
	apitest.Golden(t, "testdata/json_keys.golden", got)
}
