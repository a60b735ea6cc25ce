package raftnode

import (
	"slices"
	"testing"
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
		{"a node outside the set proposes another set", "a", append(with(0, same),
			BootView{Name: "d", Alive: true, RaftAddr: "d:7947", Proposal: []string{"a", "b", "d"}}), prop, false},
		{"a dead node's old proposal does not hold it up", "a", append(with(0, same),
			BootView{Name: "d", RaftAddr: "d:7947", Proposal: []string{"a", "b", "d"}}), prop, true},
		{"a node outside the set agrees", "a", append(with(0, same),
			BootView{Name: "d", Alive: true, RaftAddr: "d:7947", Proposal: prop}), prop, true},
	} {
		if got := BootstrapReady(tc.self, tc.views, tc.prop); got != tc.want {
			t.Errorf("%s: BootstrapReady = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJoinsBootstrap(t *testing.T) {
	t.Parallel()
	member := func(name string, bootstrapped ...string) BootView {
		return BootView{Name: name, Alive: true, RaftAddr: name + ":7947", Member: true, Proposal: bootstrapped}
	}
	client := BootView{Name: "n03", Alive: true, RaftAddr: "n03:7947"}
	for _, tc := range []struct {
		name      string
		published []string
		views     []BootView
		want      bool
	}{
		// n04 bootstrapped {n01 n02 n04} once all three proposed it; n01
		// then saw n03 start and re-proposed {n01 n02 n03} before it heard
		// n04's membership.
		{"a member bootstrapped a set naming self", []string{"n01", "n02", "n03"},
			[]BootView{member("n04", "n01", "n02", "n04"), client}, true},
		{"self's own proposal holds every member", []string{"n01", "n02", "n04"},
			[]BootView{member("n04"), client}, true},
		{"a member whose set does not name self", []string{"n01", "n02", "n03"},
			[]BootView{member("n04", "n02", "n04", "n05"), client}, false},
		{"a member past formation gossips no set", []string{"n01", "n02", "n03"},
			[]BootView{member("n04"), client}, false},
		{"own proposal misses one member", []string{"n01", "n04"},
			[]BootView{member("n04"), member("n05"), client}, false},
		{"no member yet", []string{"n01", "n02", "n03"}, []BootView{client}, false},
		{"the set of a dead member", []string{"n01", "n02", "n03"},
			[]BootView{func() BootView { v := member("n04", "n01", "n02", "n04"); v.Alive = false; return v }(), client}, false},
		{"a leader exists", []string{"n01", "n02", "n03"},
			[]BootView{member("n04", "n01", "n02", "n04"), func() BootView { v := member("n02"); v.Leader = true; return v }(), client}, false},
		{"a member's log is past the bootstrap entry", []string{"n01", "n02", "n03"},
			[]BootView{member("n04", "n01", "n02", "n04"), func() BootView { v := member("n02"); v.Index = 7; return v }(), client}, false},
	} {
		if got := JoinsBootstrap("n01", tc.published, tc.views); got != tc.want {
			t.Errorf("%s: JoinsBootstrap = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFormationSet(t *testing.T) {
	t.Parallel()
	set := []string{"a", "b", "c"}
	if got := FormationSet(1, set); !slices.Equal(got, set) {
		t.Errorf("at the bootstrap entry: FormationSet = %v, want %v", got, set)
	}
	if got := FormationSet(2, set); got != nil {
		t.Errorf("after a leader's first entry: FormationSet = %v, want nil", got)
	}
}

func TestOtherProposal(t *testing.T) {
	t.Parallel()
	prop := []string{"a", "b", "c"}
	views := []BootView{
		{Name: "a", Alive: true, Proposal: prop},
		{Name: "d", Alive: false, Proposal: []string{"a", "b", "d"}},
		{Name: "e", Alive: true},
	}
	if name, _ := OtherProposal(views, prop); name != "" {
		t.Errorf("agreeing, dead and silent nodes: OtherProposal = %q, want none", name)
	}
	views = append(views, BootView{Name: "f", Alive: true, Proposal: []string{"a", "b", "f"}})
	if name, set := OtherProposal(views, prop); name != "f" || !slices.Equal(set, []string{"a", "b", "f"}) {
		t.Errorf("OtherProposal = %q %v, want f and its set", name, set)
	}
}
