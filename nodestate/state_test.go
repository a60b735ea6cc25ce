package nodestate

import "testing"

func TestRaftAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    NodeState
		want string
	}{
		{NodeState{Addr: "10.0.0.1", RaftPort: 7947}, "10.0.0.1:7947"},
		{NodeState{Addr: "fe80::1", RaftPort: 7947}, "[fe80::1]:7947"},
		{NodeState{Addr: "10.0.0.1"}, ""},
		{NodeState{RaftPort: 7947}, ""},
	} {
		if got := tc.s.RaftAddr(); got != tc.want {
			t.Errorf("RaftAddr of %+v = %q, want %q", tc.s, got, tc.want)
		}
	}
}
