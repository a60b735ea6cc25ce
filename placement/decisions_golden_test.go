package placement_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/decisions.golden from the current output")

// TestPlace_DecisionsGolden pins the decisions (hosts, process counts and
// every figure of the breakdown, hashed) of seeded synthetic clusters from
// 12 to 1,100 nodes: the dense and the sparse pair table, the bounded pool,
// every policy, the derived-link shape a large cluster has, and traffic.
// A speed change must leave it byte-equal; regenerate only for a change of
// decisions made on purpose:
//
//	go test ./placement -run DecisionsGolden -rewrite
func TestPlace_DecisionsGolden(t *testing.T) {
	type shape struct {
		name string
		cfg  synth.Config
	}
	shapes := []shape{
		{"full12", synth.Config{Nodes: 12, Switches: 3, Seed: 1}},
		{"gaps40", synth.Config{Nodes: 40, Switches: 4, Seed: 2, Unmeasured: 0.3, DeadFrac: 0.1}},
		{"derived64", synth.Config{Nodes: 64, Switches: 4, Seed: 3, Derived: true}},
		{"full300", synth.Config{Nodes: 300, Switches: 6, Seed: 4, Unmeasured: 0.5}},
		{"derived1000", synth.Config{Nodes: 1000, Switches: 31, Seed: 5, Derived: true}},
		{"sparse1100", synth.Config{Nodes: 1100, Switches: 8, Seed: 6, PeerLinks: 8}},
		{"derived1100", synth.Config{Nodes: 1100, Switches: 34, Seed: 7, Derived: true}},
	}
	var out strings.Builder
	for _, sh := range shapes {
		snap := synth.Cluster(sh.cfg)
		var model *placement.Snapshot
		if sh.cfg.Derived {
			c := sh.cfg
			c.Model = true
			m := synth.Cluster(c)
			model = &m
		}
		for _, pol := range []string{"netload", "paper", "load", "sequential"} {
			if pol == "paper" && len(snap.Nodes) > 300 {
				continue // O(V^2) starts: seconds at 1,000 nodes
			}
			for _, n := range []int{16, 96} {
				for _, relax := range []string{"all", "loc+dist"} {
					req := placement.Request{N: n, Policy: pol, Oversubscribe: true, Force: true, Seed: 11}
					if relax != "all" {
						req.Relax = relax
						req.Hostfile = []placement.HostSlots{{Host: snap.Nodes[0].Name, Slots: n / 2}, {Host: snap.Nodes[1].Name, Slots: n - n/2}}
					}
					d, err := placement.Place(snap, req)
					if err != nil {
						t.Fatalf("%s %s n=%d %s: %v", sh.name, pol, n, relax, err)
					}
					line(&out, fmt.Sprintf("%s %s n=%d %s", sh.name, pol, n, relax), d, "")
					// The same links, the derived ones as a Model, as the leader
					// gives them: the same decision, but for netload's uplink
					// term, which needs the model's switches and switch-pair
					// capacities (direction.go). Its decisions get lines of
					// their own, saying whether the term changed the hosts or
					// only the figures (every policy's breakdown scores T as
					// netload does); the other policies' hosts must not move.
					if model != nil {
						d2, err := placement.Place(*model, req)
						if err != nil {
							t.Fatalf("%s %s n=%d %s: with a Model: %v", sh.name, pol, n, relax, err)
						}
						sameHosts := reflect.DeepEqual(d.Hosts, d2.Hosts)
						if pol != "netload" && !sameHosts {
							t.Fatalf("%s %s n=%d %s: with a Model:\n%+v\nwant\n%+v", sh.name, pol, n, relax, d2, d)
						}
						line(&out, fmt.Sprintf("%s %s n=%d %s +model", sh.name, pol, n, relax), d2,
							fmt.Sprintf(" same_hosts=%v same=%v", sameHosts, reflect.DeepEqual(d, d2)))
					}
				}
			}
		}
	}
	path := filepath.Join("testdata", "decisions.golden")
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with -rewrite)", err)
	}
	if got := out.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("decisions changed, first at line %d:\n got  %s\n want %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("decisions changed: %d lines, want %d", len(gl), len(wl))
	}
}

// line writes one decision of the golden file: T, the first hosts, a
// hash of every figure of the decision. The groups the policy compared
// (Breakdown.Considered, the breakdown's last field) explain it and are
// left out of the hash, which stays the one of the decision without them:
// listing them must not change what is decided.
func line(out *strings.Builder, name string, d placement.Decision, extra string) {
	d.Score.Considered = nil
	figures := strings.Replace(fmt.Sprintf("%+v", d), " Considered:[]}", "}", 1)
	hosts := make([]string, len(d.Hosts))
	for i, h := range d.Hosts {
		hosts[i] = fmt.Sprintf("%s:%d", h.Node, h.NP)
	}
	if len(hosts) > 6 {
		hosts = append(hosts[:6], "...")
	}
	fmt.Fprintf(out, "%s: T=%.17g hosts=%d [%s] sha=%x%s\n", name,
		d.Score.T, len(d.Hosts), strings.Join(hosts, " "), sha256.Sum256([]byte(figures)), extra)
}

// TestPlace_ConcurrentSameDecisions: placements running at once (the API's
// placement questions, shoal alloc, beside the leader's) share nothing but the pooled pair records
// they hand back, and each decides as alone.
func TestPlace_ConcurrentSameDecisions(t *testing.T) {
	t.Parallel()
	snap := synth.Cluster(synth.Config{Nodes: 120, Switches: 6, Seed: 12, Derived: true, Model: true})
	reqs := []placement.Request{{N: 16, Force: true, Oversubscribe: true}, {N: 200, Force: true, Oversubscribe: true}, {N: 48, Policy: "paper", Force: true}}
	want := make([]placement.Decision, len(reqs))
	for i, r := range reqs {
		d, err := placement.Place(snap, r)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = d
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for k := range 6 {
				i := (g + k) % len(reqs)
				d, err := placement.Place(snap, reqs[i])
				if err == nil && !reflect.DeepEqual(d, want[i]) {
					err = fmt.Errorf("request %d decided differently when concurrent: %+v, want %+v", i, d, want[i])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
