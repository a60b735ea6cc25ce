package leader

import (
	"fmt"
	"testing"
	"time"
)

func TestMembership(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	alive := func(name string) Node {
		return Node{Name: name, Status: StatusAlive, Since: t0, RaftAddr: name + ":7000"}
	}
	with := func(n Node, s Status, since time.Time) Node { n.Status, n.Since = s, since; return n }
	voter := func(id string) Server { return Server{ID: id, Addr: id + ":7000", Voter: true} }
	nonvoter := func(id string) Server { return Server{ID: id, Addr: id + ":7000"} }
	for _, tc := range []struct {
		name    string
		voters  int
		servers []Server
		nodes   []Node
		want    string
	}{
		{name: "new live nodes join as non-voters", voters: 3, servers: []Server{voter("n1")},
			nodes: []Node{alive("n1"), alive("n2"), {Name: "n3", Status: StatusAlive}},
			want:  "[add-nonvoter n2 n2:7000]"},
		{name: "promote by name until the target", voters: 3, servers: []Server{voter("n1"), nonvoter("n3"), nonvoter("n2"), nonvoter("n4")},
			nodes: []Node{alive("n1"), alive("n2"), alive("n3"), alive("n4")},
			want:  "[promote n2 n2:7000 promote n3 n3:7000]"},
		{name: "suspect non-voter is not promoted", voters: 3, servers: []Server{voter("n1"), nonvoter("n2"), nonvoter("n3")},
			nodes: []Node{alive("n1"), with(alive("n2"), Status("suspect"), now), alive("n3")},
			want:  "[promote n3 n3:7000]"},
		{name: "dead within grace: kept", voters: 3, servers: []Server{voter("n1"), voter("n2"), voter("n3")},
			nodes: []Node{alive("n1"), with(alive("n2"), StatusDead, now.Add(-9*time.Second)), alive("n3")},
			want:  "[]"},
		{name: "dead past grace: removed, a non-voter promoted in its place", voters: 3,
			servers: []Server{voter("n1"), voter("n2"), voter("n3"), nonvoter("n4")},
			nodes:   []Node{alive("n1"), with(alive("n2"), StatusDead, now.Add(-10*time.Second)), alive("n3"), alive("n4")},
			want:    "[remove n2  promote n4 n4:7000]"},
		{name: "left: removed at once", voters: 1, servers: []Server{voter("n1"), nonvoter("n2")},
			nodes: []Node{alive("n1"), with(alive("n2"), StatusLeft, now)},
			want:  "[remove n2 ]"},
		{name: "too many voters: demote the last by name, never the leader", voters: 3,
			servers: []Server{voter("n1"), voter("n2"), voter("n3"), voter("n4"), voter("n5")},
			nodes:   []Node{alive("n1"), alive("n2"), alive("n3"), alive("n4"), alive("n5")},
			want:    "[demote n5  demote n4 ]"},
		{name: "came back on another address: re-added", voters: 1, servers: []Server{voter("n1"), nonvoter("n2")},
			nodes: []Node{alive("n1"), {Name: "n2", Status: StatusAlive, RaftAddr: "n2:7001"}},
			want:  "[add-nonvoter n2 n2:7001]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := View{Now: now, Servers: tc.servers, Nodes: tc.nodes,
				Config: Config{Self: "n1", Voters: tc.voters, DeadVoterGrace: 10 * time.Second}}
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
