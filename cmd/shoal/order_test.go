package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// firstColumn is the first field of every line of a table after its header.
func firstColumn(table string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

// The listings show nodes in natural order (n2 before n10) whatever order
// the agent answered in, and leave the caller's slice as it was.
func TestListings_NaturalOrder(t *testing.T) {
	t.Parallel()
	names := []string{"n10", "n2", "n1", "n9"}
	want := []string{"n1", "n2", "n9", "n10"}
	var ns []api.Node
	var ms []api.Member
	var ps []api.ProbeInfo
	var pairs []api.NetPair
	for _, n := range names {
		ns = append(ns, api.Node{Name: n})
		ms = append(ms, api.Member{Name: n, Addr: "127.0.0.1", Status: "alive", Role: "client"})
		ps = append(ps, api.ProbeInfo{Node: n, Kind: "nodestate", State: "running"}, api.ProbeInfo{Node: n, Kind: "latency", State: "running"})
		for _, to := range names {
			if to != n {
				bw := 100.0
				pairs = append(pairs, api.NetPair{From: n, To: to, BWMbps: &bw})
			}
		}
	}

	var b bytes.Buffer
	writeNodesTable(&b, ns)
	if got := firstColumn(b.String()); !slices.Equal(got, want) {
		t.Errorf("nodes: %q, want %q", got, want)
	}
	if ns[0].Name != "n10" {
		t.Errorf("writeNodesTable reordered its argument: %v", ns)
	}

	b.Reset()
	if err := writeMembersTable(&b, ms); err != nil {
		t.Fatal(err)
	}
	if got := firstColumn(b.String()); !slices.Equal(got, want) {
		t.Errorf("members: %q, want %q", got, want)
	}

	b.Reset()
	writeProbesTable(&b, ps, time.Now())
	got := firstColumn(b.String())
	if !slices.Equal(slices.Compact(slices.Clone(got)), want) || len(got) != 2*len(want) {
		t.Errorf("probes: nodes %q, want each of %q twice in turn", got, want)
	}
	if pl := strings.Split(b.String(), "\n"); strings.Fields(pl[1])[1] != "nodestate" || strings.Fields(pl[2])[1] != "latency" {
		t.Errorf("probes: a node's probes lost the agent's order:\n%s", b.String())
	}

	b.Reset()
	writeNetMatrix(&b, ns, pairs, "bw", false)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if cols := strings.Fields(lines[1]); !slices.Equal(cols, want) {
		t.Errorf("net: columns %q, want %q", cols, want)
	}
	var rows []string
	for _, l := range lines[2 : 2+len(want)] {
		rows = append(rows, strings.Fields(l)[0])
	}
	if !slices.Equal(rows, want) {
		t.Errorf("net: rows %q, want %q", rows, want)
	}

	sorted := byPair(pairs)
	if sorted[0].From != "n1" || sorted[0].To != "n2" || sorted[len(sorted)-1].From != "n10" || sorted[len(sorted)-1].To != "n9" {
		t.Errorf("net --json: pairs from %s->%s to %s->%s, want n1->n2 first and n10->n9 last", sorted[0].From, sorted[0].To,
			sorted[len(sorted)-1].From, sorted[len(sorted)-1].To)
	}
}
