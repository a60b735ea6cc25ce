package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/topoexport"
	"github.com/shoal-hpc/shoal/testcluster"
)

// fakeNet is a cluster of two declared switches, n03 behind a slow cable
// on sw1, and n05 on a switch the leader inferred.
func fakeNet() ([]api.Node, []api.NetPair) {
	nodes := []api.Node{
		{Name: "n01", Switch: "sw1"}, {Name: "n02", Switch: "sw1"}, {Name: "n03", Switch: "sw1"},
		{Name: "n04", Switch: "sw2"}, {Name: "n05", Switch: "~n05", SwitchInferred: true},
	}
	at := time.Now()
	pair := func(a, b string, mbps float64) []api.NetPair {
		return []api.NetPair{{From: a, To: b, BWMbps: f(mbps), PeakMbps: f(mbps), MeasuredAt: at},
			{From: b, To: a, BWMbps: f(mbps), PeakMbps: f(mbps), MeasuredAt: at}}
	}
	var pairs []api.NetPair
	pairs = append(pairs, pair("n01", "n02", 190)...)
	pairs = append(pairs, pair("n01", "n03", 9.5)...)
	pairs = append(pairs, pair("n02", "n03", 9.6)...)
	pairs = append(pairs, pair("n01", "n04", 60)...)
	pairs = append(pairs, api.NetPair{From: "n04", To: "n05", RTTms: f(0.2)}) // no bandwidth: ignored
	return nodes, pairs
}

func fakeNetAgent(t *testing.T, nodes []api.Node, pairs []api.NetPair) map[string]string {
	token := testcluster.NewToken(t)
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/nodes":
			_ = json.NewEncoder(w).Encode(nodes)
		case "/v1/net":
			_ = json.NewEncoder(w).Encode(pairs)
		default:
			http.NotFound(w, r)
		}
	}))
	return map[string]string{"SHOAL_ADDR": srv.URL, "SHOAL_TOKEN": token}
}

func TestExportSlurmTopology_FakeCluster(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	nodes, pairs := fakeNet()
	env := fakeNetAgent(t, nodes, pairs)
	out, errOut, code := shoal(t, env, "export", "slurm-topology")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, line := range []string{
		"SwitchName=sw1 Nodes=n01,n02,n03\n",
		"SwitchName=sw2 Nodes=n04\n",
		"SwitchName=shoal-n05 Nodes=n05 # inferred from the bandwidth tests\n",
		"SwitchName=root Switches=shoal-n05,sw1,sw2\n",
		// n01's and n02's links are their pair's 190, n03's its best pair,
		// 9.6: sw1's median is 190 and n03 is below half of it.
		"# n03: link 9.6 Mbit/s, below 0.5 x sw1's median 190.0 Mbit/s",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("no %q in\n%s", line, out)
		}
	}
	out, _, code = shoal(t, env, "export", "slurm-topology", "--weights")
	if code != 0 || !strings.HasSuffix(out, "NodeName=n03 Weight=1979\n") {
		t.Errorf("--weights: exit %d\n%s", code, out)
	}
	out, _, code = shoal(t, env, "export", "slurm-topology", "--plugin", "block")
	if code != 0 || !strings.Contains(out, "BlockName=sw1 Nodes=n01,n02,n03\n") || !strings.Contains(out, "BlockSizes=1\n") {
		t.Errorf("--plugin block: exit %d\n%s", code, out)
	}
	out, _, code = shoal(t, env, "export", "slurm-topology", "--json")
	var top topoexport.Topology
	if err := json.Unmarshal([]byte(out), &top); code != 0 || err != nil || len(top.Slow) != 1 || top.Slow[0].Node != "n03" {
		t.Errorf("--json: exit %d, %v\n%s", code, err, out)
	}
	out, _, code = shoal(t, env, "export", "k8s-labels", "--block", "lab2")
	if code != 0 || !strings.Contains(out, "kubectl label node n03 --overwrite topology.shoal.io/block=lab2 topology.shoal.io/switch=sw1 topology.shoal.io/slow-link=true\n") {
		t.Errorf("k8s-labels: exit %d\n%s", code, out)
	}
	out, _, code = shoal(t, env, "export", "k8s-labels", "--json")
	var labels []topoexport.NodeLabels
	if err := json.Unmarshal([]byte(out), &labels); code != 0 || err != nil || len(labels) != 5 || labels[4].Labels[topoexport.LabelSwitch] != "sw2" {
		t.Errorf("k8s-labels --json: exit %d, %v\n%s", code, err, out)
	}
	for _, args := range [][]string{{"--slow-ratio", "1.5"}, {"--plugin", "fat-tree"}, {"extra"}} {
		if _, errOut, code := shoal(t, env, append([]string{"export", "slurm-topology"}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, errOut)
		}
	}
}

// With no switch declared and none inferred yet there is no topology to
// write: exit 1 with what to do, rather than a leaf per node.
func TestExport_NoSwitchKnownYet(t *testing.T) {
	env := fakeNetAgent(t, []api.Node{{Name: "a"}, {Name: "b"}}, nil)
	_, errOut, code := shoal(t, env, "export", "slurm-topology")
	if code != exitFailure || !strings.Contains(errOut, "no node's switch is known yet") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// A real in-process cluster with declared switches: the export lists them.
func TestExportSlurmTopology_Live(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	sw := []string{"rack-a", "rack-a", "rack-b"}
	c := testcluster.New(t, 3, testcluster.Options{Configure: func(i int, cfg *agent.Config) { cfg.Switch = sw[i] }})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}
	var out string
	testcluster.WaitFor(t, 30*time.Second, "every node's switch gossiped", func() bool {
		var code int
		out, _, code = shoal(t, env, "export", "slurm-topology")
		return code == 0 && strings.Contains(out, "SwitchName=rack-a Nodes=n0,n1\n") && strings.Contains(out, "SwitchName=rack-b Nodes=n2\n")
	}, func() string { return out })
	if !strings.Contains(out, "SwitchName=root Switches=rack-a,rack-b\n") {
		t.Fatalf("no root:\n%s", out)
	}
}
