package raftnode

import (
	"slices"
	"testing"

	"github.com/shoal-hpc/shoal/gossip"
)

func TestBootstrapProposal(t *testing.T) {
	t.Parallel()
	alive := func(name string) BootView { return BootView{Name: name, Alive: true, RaftAddr: name + ":7947"} }
	dead := alive("d")
	dead.Alive = false
	noAddr := alive("e")
	noAddr.RaftAddr = ""
	member := alive("m")
	member.Member = true
	for _, tc := range []struct {
		name   string
		views  []BootView
		expect int
		want   []string
	}{
		{"too few", []BootView{alive("a"), alive("b")}, 3, nil},
		{"exactly expect", []BootView{alive("c"), alive("a"), alive("b")}, 3, []string{"a", "b", "c"}},
		{"first names, not first arrivals", []BootView{alive("z"), alive("c"), alive("a"), alive("b")}, 3, []string{"a", "b", "c"}},
		{"dead and addressless do not count", []BootView{alive("a"), alive("b"), dead, noAddr}, 3, nil},
		{"a member exists: no proposal", []BootView{alive("a"), alive("b"), alive("c"), member}, 3, nil},
		{"single node", []BootView{alive("a")}, 1, []string{"a"}},
	} {
		if got := BootstrapProposal(tc.views, tc.expect); !slices.Equal(got, tc.want) {
			t.Errorf("%s: BootstrapProposal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBootstrapReady(t *testing.T) {
	t.Parallel()
	prop := []string{"a", "b", "c"}
	agreeing := func(name string) BootView {
		return BootView{Name: name, Alive: true, RaftAddr: name + ":7947", Proposal: prop}
	}
	with := func(i int, f func(*BootView)) []BootView {
		vs := []BootView{agreeing("a"), agreeing("b"), agreeing("c")}
		f(&vs[i])
		return vs
	}
	same := func(*BootView) {}
	for _, tc := range []struct {
		name  string
		self  string
		views []BootView
		prop  []string
		want  bool
	}{
		{"all agree", "a", with(0, same), prop, true},
		{"self outside the set", "z", with(0, same), prop, false},
		{"empty proposal", "a", with(0, same), nil, false},
		{"one proposes another set", "a", with(1, func(v *BootView) { v.Proposal = []string{"a", "b", "d"} }), prop, false},
		{"one is dead", "a", with(2, func(v *BootView) { v.Alive = false }), prop, false},
		{"one already has raft state", "a", with(2, func(v *BootView) { v.Member = true }), prop, false},
		{"one has no raft address", "a", with(1, func(v *BootView) { v.RaftAddr = "" }), prop, false},
		{"one is not seen", "a", with(0, same)[:2], prop, false},
	} {
		if got := BootstrapReady(tc.self, tc.views, tc.prop); got != tc.want {
			t.Errorf("%s: BootstrapReady = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    gossip.NodeState
		want string
	}{
		{gossip.NodeState{Addr: "10.0.0.1", RaftPort: 7947}, "10.0.0.1:7947"},
		{gossip.NodeState{Addr: "fe80::1", RaftPort: 7947}, "[fe80::1]:7947"},
		{gossip.NodeState{Addr: "10.0.0.1"}, ""},
		{gossip.NodeState{RaftPort: 7947}, ""},
	} {
		if got := Addr(tc.s); got != tc.want {
			t.Errorf("Addr(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
