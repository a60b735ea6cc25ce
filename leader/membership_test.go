package leader

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestMembership(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	server := func(name string) Node {
		return Node{Name: name, Status: nodestate.StatusAlive, Since: t0, HasState: true, RaftAddr: name + ":7000", Server: true}
	}
	client := func(name string) Node { n := server(name); n.Server = false; return n }
	with := func(n Node, s nodestate.Status) Node { n.Status = s; return n }
	voter := func(id string) Server { return Server{ID: id, Addr: id + ":7000", Voter: true} }
	for _, tc := range []struct {
		name    string
		servers []Server
		nodes   []Node
		want    string
	}{
		{name: "a live server not in raft joins as a non-voter; clients and the unaddressed do not", servers: []Server{voter("n1")},
			nodes: []Node{server("n1"), server("n2"), client("n3"), {Name: "n4", Status: nodestate.StatusAlive, Server: true}},
			want:  "[add-nonvoter n2 n2:7000]"},
		{name: "a suspect server waits", servers: []Server{voter("n1")},
			nodes: []Node{server("n1"), with(server("n2"), nodestate.Status("suspect"))},
			want:  "[]"},
		{name: "came back on another address: added again", servers: []Server{voter("n1"), {ID: "n2", Addr: "n2:7001"}},
			nodes: []Node{server("n1"), server("n2")},
			want:  "[add-nonvoter n2 n2:7000]"},
		{name: "in raft already: nothing", servers: []Server{voter("n1"), voter("n2")},
			nodes: []Node{server("n1"), server("n2")},
			want:  "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := View{Now: now, Servers: tc.servers, Nodes: tc.nodes, Config: Config{Self: "n1", Voters: 3, Servers: 5}}
			var got []string
			for _, a := range Membership(v) {
				got = append(got, fmt.Sprintf("%s %s %s", a.Kind, a.ID, a.Addr))
			}
			if s := fmt.Sprint(got); s != tc.want {
				t.Errorf("actions %s, want %s", s, tc.want)
			}
		})
	}
}

func TestWantedServers(t *testing.T) {
	t.Parallel()
	node := func(name string, server bool, st nodestate.Status) Node {
		return Node{Name: name, Status: st, HasState: true, RaftAddr: name + ":7000", Server: server}
	}
	srv := func(ids ...string) []Server {
		var out []Server
		for _, id := range ids {
			out = append(out, Server{ID: id, Addr: id + ":7000", Voter: true})
		}
		return out
	}
	drains := &raftfsm.State{Drains: map[string]raftfsm.Drain{"c2": {Node: "c2"}}}
	for _, tc := range []struct {
		name    string
		target  int
		servers []Server
		nodes   []Node
		state   *raftfsm.State
		want    string
	}{
		{name: "full: nobody", target: 3, servers: srv("s1", "s2", "s3"),
			nodes: []Node{node("s1", true, nodestate.StatusAlive), node("s2", true, nodestate.StatusAlive), node("s3", true, nodestate.StatusAlive), node("c1", false, nodestate.StatusAlive)},
			want:  "[]"},
		{name: "two missing: the first clients by name", target: 5, servers: srv("s1", "s2", "s3"),
			nodes: []Node{node("s1", true, nodestate.StatusAlive), node("s2", true, nodestate.StatusAlive), node("s3", true, nodestate.StatusAlive),
				node("c3", false, nodestate.StatusAlive), node("c1", false, nodestate.StatusAlive), node("c2", false, nodestate.StatusAlive)},
			want: "[c1 c2]"},
		{name: "a dead server no longer counts; a suspect one does", target: 3, servers: srv("s1", "s2", "s3"),
			nodes: []Node{node("s1", true, nodestate.StatusAlive), node("s2", true, nodestate.StatusDead), node("s3", true, nodestate.Status("suspect")), node("c1", false, nodestate.StatusAlive)},
			want:  "[c1]"},
		{name: "a server waiting to be added counts", target: 3, servers: srv("s1", "s2"),
			nodes: []Node{node("s1", true, nodestate.StatusAlive), node("s2", true, nodestate.StatusAlive), node("c0", true, nodestate.StatusAlive), node("c1", false, nodestate.StatusAlive)},
			want:  "[]"},
		{name: "not alive, not addressed, without state or drained: never", target: 5, servers: srv("s1"),
			nodes: []Node{node("s1", true, nodestate.StatusAlive), node("c1", false, nodestate.StatusDead), {Name: "c3", Status: nodestate.StatusAlive, HasState: true},
				{Name: "c4", Status: nodestate.StatusAlive, RaftAddr: "c4:7000"}, node("c2", false, nodestate.StatusAlive), node("c5", false, nodestate.StatusAlive)},
			state: drains, want: "[c5]"},
		{name: "names in natural order: c2 and c9 before c10", target: 3, servers: srv("s1"),
			nodes: []Node{node("s1", true, nodestate.StatusAlive), node("c10", false, nodestate.StatusAlive), node("c9", false, nodestate.StatusAlive), node("c2", false, nodestate.StatusAlive)},
			want:  "[c2 c9]"},
		{name: "no target: nobody", target: 0, servers: srv("s1"),
			nodes: []Node{node("s1", true, nodestate.StatusAlive), node("c1", false, nodestate.StatusAlive)}, want: "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := View{Servers: tc.servers, Nodes: tc.nodes, State: tc.state, Config: Config{Self: "s1", Voters: 3, Servers: tc.target}}
			if got := fmt.Sprint(WantedServers(v)); got != tc.want {
				t.Errorf("wanted %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPlanVoters(t *testing.T) {
	t.Parallel()
	v := func(id string) PilotServer { return PilotServer{ID: id, Voter: true, Alive: true, Stable: true} }
	nv := func(id string) PilotServer { return PilotServer{ID: id, Alive: true, Stable: true} }
	lead := func(id string) PilotServer { p := v(id); p.Leader = true; return p }
	dead := func(p PilotServer) PilotServer { p.Alive, p.Stable = false, false; return p }
	failed := func(p PilotServer) PilotServer { p = dead(p); p.Failed = true; return p }
	unstable := func(p PilotServer) PilotServer { p.Stable = false; return p }
	for _, tc := range []struct {
		name    string
		target  int
		servers []PilotServer
		want    string
	}{
		{name: "at target: standbys stay non-voters", target: 3,
			servers: []PilotServer{lead("a"), v("b"), v("c"), nv("d"), nv("e")}, want: "[] []"},
		{name: "a voter dead within the grace still counts: nothing yet", target: 3,
			servers: []PilotServer{lead("a"), dead(v("b")), v("c"), nv("e"), nv("d")}, want: "[] []"},
		{name: "a voter failed: demoted, and the first stable standby by name promoted", target: 3,
			servers: []PilotServer{lead("a"), failed(v("b")), v("c"), nv("e"), nv("d")}, want: "[d] [b]"},
		{name: "an unstable or dead standby is not promoted", target: 3,
			servers: []PilotServer{lead("a"), failed(v("b")), v("c"), unstable(nv("d")), dead(nv("e"))}, want: "[] [b]"},
		{name: "failed voters are demoted even with no standby", target: 3,
			servers: []PilotServer{lead("a"), failed(v("b")), v("c")}, want: "[] [b]"},
		{name: "too many live voters: demote the last by name, never the leader", target: 3,
			servers: []PilotServer{v("a"), v("b"), v("c"), v("d"), lead("e")}, want: "[] [d c]"},
		{name: "the bootstrap with fewer than target: promote all it can", target: 5,
			servers: []PilotServer{lead("a"), v("b"), v("c"), nv("d")}, want: "[d] []"},
		{name: "a failed leader is never demoted by its own promoter", target: 3,
			servers: []PilotServer{failed(lead("a")), v("b"), v("c")}, want: "[] []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, d := PlanVoters(tc.servers, tc.target)
			if got := fmt.Sprint(p, " ", d); got != tc.want {
				t.Errorf("promote, demote = %s, want %s", got, tc.want)
			}
		})
	}
}
