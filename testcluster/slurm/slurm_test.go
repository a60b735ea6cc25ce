package slurm

import (
	"bytes"
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/internal/topoexport"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

func TestSlurmConf(t *testing.T) {
	t.Parallel()
	nodes := []Node{{Name: "b", Addr: netip.MustParseAddr("10.0.0.2"), CPUs: 2}, {Name: "a", Addr: netip.MustParseAddr("10.0.0.1")}}
	conf := slurmConf("/d", nodes, Config{Topology: "SwitchName=s Nodes=a,b\n", Weights: map[string]int{"a": 500}, Extra: []string{"SchedulerParameters=defer"}})
	for _, line := range []string{
		"SlurmctldHost=b(10.0.0.2)\n",
		"AuthInfo=socket=/d/munge/munge.socket\n",
		"SelectType=select/cons_tres\n",
		"ProctrackType=proctrack/linuxproc\n",
		"TaskPlugin=task/none\n",
		"SlurmdParameters=config_overrides\n",
		"TopologyPlugin=topology/tree\n",
		"SchedulerParameters=defer\n",
		"NodeName=b NodeAddr=10.0.0.2 NodeHostname=b CPUs=2 RealMemory=1000 State=UNKNOWN\n",
		"NodeName=a NodeAddr=10.0.0.1 NodeHostname=a CPUs=1 RealMemory=1000 State=UNKNOWN Weight=500\n",
		"PartitionName=all Nodes=b,a ",
	} {
		if !strings.Contains(conf, line) {
			t.Errorf("no %q in\n%s", line, conf)
		}
	}
	if conf := slurmConf("/d", nodes, Config{}); !strings.Contains(conf, "TopologyPlugin=topology/none\n") {
		t.Errorf("no topology: %s", conf)
	}
}

// TestCluster_OnTestbed starts Slurm on four namespaces over two switches,
// allocates, and restarts slurmctld with the topology.conf shoal's export
// writes: slurmctld must accept it and list its switches.
func TestCluster_OnTestbed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Slurm on a testbed")
	}
	if ok, why := Available(); !ok {
		t.Skip(why)
	}
	netns.SkipIfUnavailable(t)
	topo := netns.Topology{Name: "slurm4",
		Switches: []netns.Switch{{Name: "sw1"}, {Name: "sw2"}},
		Nodes: []netns.Node{{Name: "n1", Switch: "sw1", Mbit: 100}, {Name: "n2", Switch: "sw1", Mbit: 100},
			{Name: "n3", Switch: "sw2", Mbit: 100}, {Name: "n4", Switch: "sw2", Mbit: 100}},
		Uplinks: []netns.Uplink{{A: "sw1", B: "sw2", Mbit: 50}},
	}
	tb := netns.UpForTest(t, topo, netns.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c, err := Up(ctx, tb, Options{Dir: t.TempDir(), CPUs: 2, Controller: "n2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if c.Controller() != "n2" {
		t.Errorf("controller %s", c.Controller())
	}
	// Each task runs in its node's namespace, under its hostname.
	out, err := c.Client(ctx, "srun", "-N", "4", "-n", "4", "hostname")
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(strings.Fields(out))); !slices.Equal(got, []string{"n1", "n2", "n3", "n4"}) {
		t.Fatalf("srun hostname: %q", out)
	}
	hosts, id, err := c.Alloc(ctx, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 {
		t.Fatalf("alloc: %v", hosts)
	}
	if err := c.Release(ctx, id); err != nil {
		t.Fatal(err)
	}

	var nodes []topoexport.Node
	for _, n := range topo.Nodes {
		nodes = append(nodes, topoexport.Node{Name: n.Name, Switch: n.Switch, LinkMbps: 100})
	}
	nodes[3].LinkMbps = 10 // n4: a slow cable, below half of sw2's median 55: weight 550
	tp := topoexport.Build(nodes, 0)
	var conf bytes.Buffer
	if err := tp.SlurmTree(&conf); err != nil {
		t.Fatal(err)
	}
	if err := c.Configure(ctx, Config{Topology: conf.String(), Weights: tp.Weights()}); err != nil {
		t.Fatal(err)
	}
	out, err = c.Client(ctx, "scontrol", "show", "topology")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scontrol show topology:\n%s", out)
	for _, want := range []string{"SwitchName=sw1 ", "SwitchName=sw2 ", "SwitchName=root "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in scontrol show topology:\n%s", want, out)
		}
	}
	// Under topology/tree two nodes come from one switch, and the slow n4
	// is taken last: sw1's n1 and n2.
	hosts, id, err = c.Alloc(ctx, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hosts, []string{"n1", "n2"}) {
		t.Errorf("tree allocation %v, want [n1 n2]", hosts)
	}
	out, err = c.Client(ctx, "scontrol", "show", "node", "n4")
	if err != nil || !strings.Contains(out, "Weight=550") {
		t.Errorf("n4's weight: %v\n%s", err, out)
	}
}
