package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
)

// TestNodesTable_Switch: the SWITCH column tells a declared switch from
// an inferred one ("?") and an unknown one ("-"), and DRAIN stays last.
func TestNodesTable_Switch(t *testing.T) {
	t.Parallel()
	ns := []api.Node{
		{Name: "a1", Switch: "rackA"},
		{Name: "b1", Switch: "~b1", SwitchInferred: true},
		{Name: "a2", Switch: "rackA", SwitchInferred: true},
		{Name: "u"},
	}
	var buf bytes.Buffer
	writeNodesTable(&buf, ns)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	head := strings.Fields(lines[0])
	if head[len(head)-3] != "SWITCH" || head[len(head)-2] != "DRAIN" || head[len(head)-1] != "ROLE" {
		t.Fatalf("header %q: want SWITCH, DRAIN, then ROLE last", lines[0])
	}
	want := map[string]string{"a1": "rackA", "b1": "~b1?", "a2": "rackA?", "u": "-"}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if got := f[len(f)-3]; got != want[f[0]] {
			t.Errorf("%s: SWITCH %q, want %q (%q)", f[0], got, want[f[0]], l)
		}
	}
}

// TestNodesTable_Unhealthy: a live server whose raft log cannot be
// written shows unhealthy in STATUS, with the reason under the table; a
// healthy one and a dead one keep gossip's status.
func TestNodesTable_Unhealthy(t *testing.T) {
	t.Parallel()
	ns := []api.Node{
		{Name: "n1", Addr: "10.0.0.1", Status: "alive", Health: "ok"},
		{Name: "n2", Addr: "10.0.0.2", Status: "alive", Health: "unhealthy", Unhealthy: "raft log write failed: no space left on device"},
		{Name: "n3", Addr: "10.0.0.3", Status: "dead", Health: "ok"},
	}
	var buf bytes.Buffer
	writeNodesTable(&buf, ns)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := map[string]string{"n1": "alive", "n2": "unhealthy", "n3": "dead"}
	for _, l := range lines[1:4] {
		f := strings.Fields(l)
		if f[2] != want[f[0]] {
			t.Errorf("%s: STATUS %q, want %q (%q)", f[0], f[2], want[f[0]], l)
		}
	}
	if len(lines) != 5 || lines[4] != "n2: unhealthy: raft log write failed: no space left on device" {
		t.Fatalf("want the reason under the table, got:\n%s", buf.String())
	}
}
