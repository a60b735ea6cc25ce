package topoexport

import (
	"bytes"
	"testing"

	"github.com/shoal-hpc/shoal/netmodel"
)

// lab is a fake cluster: two declared switches, one inferred, a node of
// unknown switch, and n03 behind a slow cable on sw1.
func lab() []Node {
	return []Node{
		{Name: "n10", Switch: "sw2", LinkMbps: 100},
		{Name: "n01", Switch: "sw1", LinkMbps: 200},
		{Name: "n02", Switch: "sw1", LinkMbps: 190},
		{Name: "n03", Switch: "sw1", LinkMbps: 20},
		{Name: "n04", Switch: "sw1", LinkMbps: 195},
		{Name: "n9", Switch: "sw2", LinkMbps: 98},
		{Name: "n11", Switch: "~n11", Inferred: true, LinkMbps: 50},
		{Name: "n12", Switch: "~n11", Inferred: true},
		{Name: "lone"},
	}
}

func TestBuild_GroupsAndSlowNodes(t *testing.T) {
	t.Parallel()
	top := Build(lab(), 0)
	var names []string
	for _, s := range top.Switches {
		names = append(names, s.Name)
	}
	if got := join(names); got != "shoal-n11 sw1 sw2 unknown-lone" {
		t.Fatalf("switches %q", got)
	}
	if got := join(top.Switches[2].Nodes); got != "n9 n10" {
		t.Errorf("sw2's nodes in natural order: %q", got)
	}
	// sw1's median is (190+195)/2 = 192.5; n03 at 20 is below half of it.
	if len(top.Slow) != 1 || top.Slow[0].Node != "n03" || top.Slow[0].MedianMbps != 192.5 || top.Slow[0].Weight != 963 {
		t.Fatalf("slow %+v, want n03 at median 192.5, weight 963", top.Slow)
	}
	// A switch whose one measured node is its median flags nobody, and an
	// unmeasured node is never slow.
	if top.Switches[0].MedianMbps != 50 {
		t.Errorf("shoal-n11 median %v", top.Switches[0].MedianMbps)
	}
	// A ratio just under 1 flags every node below its switch's median,
	// each weighted by how far below.
	if got := Build(lab(), 0.999).Weights(); len(got) != 3 || got["n9"] != 101 || got["n02"] != 101 || got["n03"] != 963 {
		t.Errorf("ratio 0.999: weights %v", got)
	}
}

func TestSlurmTree(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Build(lab(), 0).SlurmTree(&b); err != nil {
		t.Fatal(err)
	}
	want := `# topology.conf for Slurm's topology/tree (slurm.conf: TopologyPlugin=topology/tree),
# written by shoal export: 9 nodes on 4 switches (2 declared with --switch, 1 inferred from bandwidth tests, 1 nodes of unknown switch).
# n03: link 20.0 Mbit/s, below 0.5 x sw1's median 192.5 Mbit/s: slow (slurm.conf NodeName=n03 Weight=963, see --weights)
SwitchName=shoal-n11 Nodes=n11,n12 # inferred from the bandwidth tests
SwitchName=sw1 Nodes=n01,n02,n03,n04
SwitchName=sw2 Nodes=n9,n10
SwitchName=unknown-lone Nodes=lone # switch unknown (not declared, too few tests to infer): a leaf of its own
SwitchName=root Switches=shoal-n11,sw1,sw2,unknown-lone
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestSlurmTree_OneSwitchHasNoRoot(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	_ = Build([]Node{{Name: "a", Switch: "root"}, {Name: "b", Switch: "root"}}, 0).SlurmTree(&b)
	if bytes.Contains(b.Bytes(), []byte("Switches=")) || !bytes.Contains(b.Bytes(), []byte("SwitchName=root Nodes=a,b\n")) {
		t.Fatalf("one leaf: %s", b.String())
	}
	b.Reset()
	_ = Build([]Node{{Name: "a", Switch: "root"}, {Name: "b", Switch: "x"}}, 0).SlurmTree(&b)
	if !bytes.Contains(b.Bytes(), []byte("SwitchName=shoal-root Switches=root,x\n")) {
		t.Fatalf("a leaf called root: %s", b.String())
	}
}

func TestSlurmBlock(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	_ = Build(lab(), 0).SlurmBlock(&b)
	for _, line := range []string{"BlockName=sw1 Nodes=n01,n02,n03,n04\n", "BlockName=sw2 Nodes=n9,n10\n", "BlockSizes=1\n"} {
		if !bytes.Contains(b.Bytes(), []byte(line)) {
			t.Errorf("no %q in\n%s", line, b.String())
		}
	}
	b.Reset()
	_ = Build([]Node{{Name: "a", Switch: "x"}, {Name: "b", Switch: "y"}}, 0).SlurmBlock(&b)
	if bytes.Contains(b.Bytes(), []byte("BlockSizes")) {
		t.Errorf("blocks of one size need no BlockSizes:\n%s", b.String())
	}
}

func TestSlurmWeights(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	_ = Build(lab(), 0).SlurmWeights(&b)
	want := `# slurm.conf node weights from shoal's measured links: 1 of 9 nodes on a link below 0.5 x their switch's median.
# Slurm takes the lowest Weight first; every other node keeps the default Weight=1.
# Put each Weight= on the node's own NodeName line (a node may be defined once).
NodeName=n03 Weight=963
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestK8sLabels(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	_ = Build(lab(), 0).K8sLabels(&b, "lab 1")
	for _, line := range []string{
		"kubectl label node n03 --overwrite topology.shoal.io/block=lab-1 topology.shoal.io/switch=sw1 topology.shoal.io/slow-link=true\n",
		"kubectl label node n01 --overwrite topology.shoal.io/block=lab-1 topology.shoal.io/switch=sw1 topology.shoal.io/slow-link-\n",
		"kubectl label node n12 --overwrite topology.shoal.io/block=lab-1 topology.shoal.io/switch=shoal-n11 topology.shoal.io/slow-link-\n",
	} {
		if !bytes.Contains(b.Bytes(), []byte(line)) {
			t.Errorf("no %q in\n%s", line, b.String())
		}
	}
	ls := Build(lab(), 0).Labels("shoal")
	if len(ls) != 9 || ls[0].Node != "n11" || ls[0].Labels[LabelSwitch] != "shoal-n11" || len(ls[0].Labels) != 2 {
		t.Errorf("labels %+v", ls)
	}
}

// A name that is not a host name is left out of every file, not written
// into a config line or a shell command.
func TestBuild_SkipsNamesThatAreNotHostNames(t *testing.T) {
	t.Parallel()
	top := Build([]Node{{Name: "a;rm -rf /", Switch: "x"}, {Name: "b\nSwitchName=evil", Switch: "x"}, {Name: "ok", Switch: "sw 1"}}, 0)
	if len(top.Skipped) != 2 || top.nodes() != 1 || top.Switches[0].Name != "sw-1" {
		t.Fatalf("%+v", top)
	}
	var b bytes.Buffer
	_ = top.K8sLabels(&b, "x")
	_ = top.SlurmTree(&b)
	if bytes.Contains(b.Bytes(), []byte("rm -rf")) || bytes.Contains(b.Bytes(), []byte("evil")) {
		t.Fatalf("a skipped name was written:\n%s", b.String())
	}
}

// Links reads each node's best latest test against its own switch's
// peers: n03's slow cable bounds every pair it is in, and the pair across
// switches does not count.
func TestLinks(t *testing.T) {
	t.Parallel()
	sw := map[string]string{"n01": "sw1", "n02": "sw1", "n03": "sw1", "n04": "sw2", "n05": ""}
	ms := []netmodel.Measurement{
		{A: "n01", B: "n02", AvailMbps: 190, PeakMbps: 195, BWAt: 1},
		{A: "n01", B: "n03", AvailMbps: 19, PeakMbps: 21, BWAt: 2},
		{A: "n02", B: "n03", AvailMbps: 18, PeakMbps: 90, BWAt: 3}, // it was faster once: the latest test counts
		{A: "n01", B: "n04", AvailMbps: 60, PeakMbps: 60, BWAt: 4},
		{A: "n04", B: "n05", AvailMbps: 60, PeakMbps: 60, BWAt: 5},
	}
	got := Links(sw, ms)
	if got["n01"] != 190 || got["n02"] != 190 || got["n03"] != 19 || len(got) != 3 {
		t.Fatalf("links %v", got)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
