package netns

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func validTopology() Topology {
	return Topology{
		Name:     "t",
		Switches: []Switch{{Name: "s1"}, {Name: "s2"}, {Name: "s3"}},
		Nodes: []Node{
			{Name: "a", Switch: "s1", Mbit: 100},
			{Name: "b", Switch: "s2", Mbit: 20},
			{Name: "c", Switch: "s3", Unshaped: true},
		},
		Uplinks: []Uplink{{A: "s1", B: "s2", Mbit: 50}, {A: "s2", B: "s3", Unshaped: true}},
		Flows:   []Flow{{From: "a", To: "b", Mbit: 10}, {From: "c", To: "a"}},
		Hogs:    []Hog{{Node: "c", Workers: 2, Nice: 5}},
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*Topology)
		want   []string // substrings of the error; none: valid
	}{
		{"valid", func(*Topology) {}, nil},
		{"no switches", func(t *Topology) { t.Switches = nil; t.Nodes = nil; t.Uplinks = nil; t.Flows = nil; t.Hogs = nil },
			[]string{"at least one switch", "at least one node"}},
		{"duplicate switch", func(t *Topology) { t.Switches = append(t.Switches, Switch{Name: "s1"}) }, []string{`switches[3].name "s1": duplicate switch`}},
		{"bad switch name", func(t *Topology) { t.Switches[0].Name = "S 1"; t.Nodes[0].Switch = "S 1"; t.Uplinks = t.Uplinks[1:] }, []string{`switches[0].name "S 1": must match`}},
		{"empty node name", func(t *Topology) { t.Nodes[0].Name = "" }, []string{"nodes[0].name: empty name"}},
		{"negative load", func(t *Topology) { t.Nodes[0].Load = -0.5 }, []string{"load -0.5 must be between 0 and 64"}},
		{"NaN load", func(t *Topology) { t.Nodes[0].Load = math.NaN() }, []string{"load NaN must be between 0 and 64"}},
		{"background load", func(t *Topology) { t.Nodes[0].Load = 0.4 }, nil},
		{"long node name", func(t *Topology) { t.Nodes[2].Name = strings.Repeat("x", 33); t.Flows = nil; t.Hogs = nil }, []string{"longer than 32 bytes"}},
		{"duplicate node", func(t *Topology) { t.Nodes[1].Name = "a"; t.Flows = nil }, []string{`nodes[1].name "a": duplicate node`}},
		{"unknown switch", func(t *Topology) { t.Nodes[1].Switch = "s9" }, []string{`nodes[1].switch "s9": unknown switch`}},
		{"zero rate", func(t *Topology) { t.Nodes[0].Mbit = 0 }, []string{"nodes[0] (a): mbit 0 must be > 0"}},
		{"negative rate", func(t *Topology) { t.Nodes[1].Mbit = -5 }, []string{"nodes[1] (b): mbit -5 must be > 0"}},
		{"rate and unshaped", func(t *Topology) { t.Nodes[2].Mbit = 10 }, []string{"mbit 10 with unshaped set"}},
		{"uplink unknown switch", func(t *Topology) { t.Uplinks[0].B = "s9" }, []string{`uplinks[0] (s1-s9): unknown switch "s9"`}},
		{"uplink zero rate", func(t *Topology) { t.Uplinks[0].Mbit = 0 }, []string{"uplinks[0] (s1-s2): mbit 0 must be > 0"}},
		{"uplink to itself", func(t *Topology) { t.Uplinks[0].B = "s1" }, []string{"joins a switch to itself"}},
		{"uplink loop", func(t *Topology) { t.Uplinks = append(t.Uplinks, Uplink{A: "s3", B: "s1", Mbit: 10}) }, []string{"uplinks[2] (s3-s1): closes a loop"}},
		{"parallel uplinks", func(t *Topology) { t.Uplinks = append(t.Uplinks, Uplink{A: "s2", B: "s1", Mbit: 10}) }, []string{"closes a loop"}},
		{"flow unknown node", func(t *Topology) { t.Flows[0].To = "zz" }, []string{`flows[0] (a->zz): unknown node "zz"`}},
		{"flow to itself", func(t *Topology) { t.Flows[0].To = "a" }, []string{"from and to are the same node"}},
		{"flow negative rate", func(t *Topology) { t.Flows[0].Mbit = -1 }, []string{"mbit -1 must be >= 0"}},
		{"udp flow without a rate", func(t *Topology) { t.Flows[0].Mbit, t.Flows[0].UDP = 0, true }, []string{"a udp flow needs its rate"}},
		{"hog unknown node", func(t *Topology) { t.Hogs[0].Node = "zz" }, []string{`hogs[0] (zz): unknown node "zz"`}},
		{"hog no workers", func(t *Topology) { t.Hogs[0].Workers = 0 }, []string{"workers 0 must be >= 1"}},
		{"hog bad nice", func(t *Topology) { t.Hogs[0].Nice = 20 }, []string{"nice 20 must be within 0..19"}},
		{"duplicate hog", func(t *Topology) { t.Hogs = append(t.Hogs, Hog{Node: "c", Workers: 1}) }, []string{"duplicate hog"}},
		{"asymmetric node", func(t *Topology) { t.Nodes[0].MbitIn = 20 }, nil},
		{"negative mbit_in", func(t *Topology) { t.Nodes[0].MbitIn = -1 }, []string{"nodes[0] (a) mbit_in -1 must be >= 0"}},
		{"mbit_in on unshaped", func(t *Topology) { t.Nodes[2].MbitIn = 10 }, []string{"nodes[2] (c) mbit_in 10 with unshaped set"}},
		{"asymmetric uplink", func(t *Topology) { t.Uplinks[0].MbitBA = 5 }, nil},
		{"negative mbit_ba", func(t *Topology) { t.Uplinks[0].MbitBA = -2 }, []string{"uplinks[0] (s1-s2) mbit_ba -2 must be >= 0"}},
		{"mbit_ba on unshaped", func(t *Topology) { t.Uplinks[1].MbitBA = 5 }, []string{"uplinks[1] (s2-s3) mbit_ba 5 with unshaped set"}},
		{"change", func(t *Topology) { t.Changes = []Change{{AtS: 60, Node: "a", Mbit: 10, MbitIn: 5}} }, nil},
		{"change unknown node", func(t *Topology) { t.Changes = []Change{{AtS: 60, Node: "zz", Mbit: 10}} }, []string{`changes[0] (zz): unknown node "zz"`}},
		{"change at zero", func(t *Topology) { t.Changes = []Change{{Node: "a", Mbit: 10}} }, []string{"changes[0] (a): at_s 0 must be > 0"}},
		{"change no rate", func(t *Topology) { t.Changes = []Change{{AtS: 1, Node: "a"}} }, []string{"changes[0] (a): mbit 0 must be > 0"}},
		{"change negative in", func(t *Topology) { t.Changes = []Change{{AtS: 1, Node: "a", Mbit: 3, MbitIn: -3}} }, []string{"changes[0] (a): mbit_in -3 must be >= 0"}},
		{"too many nodes", func(t *Topology) {
			t.Nodes = nil
			for i := range MaxNodes + 1 {
				t.Nodes = append(t.Nodes, Node{Name: fmt.Sprintf("n%d", i), Switch: "s1", Mbit: 1})
			}
			t.Flows, t.Hogs = nil, nil
		}, []string{"251 nodes, at most 250"}},
		{"all errors at once", func(t *Topology) { t.Nodes[0].Switch = "s9"; t.Nodes[1].Mbit = 0 }, []string{"unknown switch", "mbit 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			topo := validTopology()
			tc.modify(&topo)
			err := topo.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidTopology) {
				t.Fatalf("Validate: %v, want ErrInvalidTopology", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseTopology_RejectsUnknownFieldsAndBadJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"switches":[{"name":"s"}],"nodes":[{"name":"a","switch":"s","mbit":10,"delay_ms":5}]}`,
		`{"switches":[{"name":"s"}],`,
		`{"switches":[{"name":"s"}],"nodes":[{"name":"a","switch":"s","mbit":"fast"}]}`,
	} {
		if _, err := ParseTopology([]byte(in)); err == nil {
			t.Errorf("ParseTopology(%s) = nil error", in)
		}
	}
	if _, err := ParseTopology([]byte(`{"switches":[{"name":"s"}],"nodes":[{"name":"a","switch":"s","mbit":0}]}`)); !errors.Is(err, ErrInvalidTopology) {
		t.Errorf("zero rate: %v, want ErrInvalidTopology", err)
	}
}

// TestTopologyFiles validates every topology shipped in the repo.
func TestTopologyFiles(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.json")
	more, _ := filepath.Glob("../../testbed/*.json")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no topology files found")
	}
	for _, f := range files {
		if _, err := LoadTopology(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestLab12_Shape(t *testing.T) {
	t.Parallel()
	topo, err := LoadTopology("../../testbed/lab12.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) != 12 || len(topo.Switches) != 3 {
		t.Fatalf("lab12: %d nodes on %d switches, want 12 on 3", len(topo.Nodes), len(topo.Switches))
	}
	lo, hi := 1<<30, 0
	for _, n := range topo.Nodes {
		lo, hi = min(lo, n.Mbit), max(hi, n.Mbit)
	}
	if lo != 20 || hi != 200 {
		t.Errorf("node links from %d to %d Mbit/s, want 20 to 200", lo, hi)
	}
	for _, u := range topo.Uplinks {
		if u.Mbit >= hi {
			t.Errorf("uplink %s-%s at %d Mbit/s is not thinner than the fastest node link (%d)", u.A, u.B, u.Mbit, hi)
		}
	}
	if n := len(topo.Flows); n < 1 || n > 2 {
		t.Errorf("%d background flows, want 1 or 2", n)
	}
	if n := len(topo.Hogs); n != 2 {
		t.Errorf("%d hogged nodes, want 2", n)
	}
}
