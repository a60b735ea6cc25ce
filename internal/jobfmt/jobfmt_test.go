package jobfmt

import (
	"slices"
	"strings"
	"testing"
)

func TestCompressHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"n01,n02,n03,n04", "n[01-04]"},
		{"n01,n02,n03,n05", "n[01-03,05]"},
		{"n1", "n1"},
		{"n0,n1", "n[0-1]"},
		{"node9,node10", "node9,node10"}, // widths differ: not one range
		{"n01.lab,n02.lab", "n[01-02].lab"},
		{"gpu1,n1,gpu2,n2", "gpu[1-2],n[1-2]"},
		{"login,n3,n1,n2", "login,n[3,1-2]"}, // rank order kept
		{"a,b", "a,b"},
		{"", ""},
	} {
		var hosts []string
		if tc.in != "" {
			hosts = strings.Split(tc.in, ",")
		}
		if got := CompressHosts(hosts); got != tc.want {
			t.Errorf("CompressHosts(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// ExpandHosts reads what CompressHosts writes, and Slurm's own lists.
func TestExpandHosts(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"n01,n02,n03,n04", "n01,n02,n03,n05", "n1", "node9,node10", "n01.lab,n02.lab", "login,n3,n1,n2"} {
		hosts := strings.Split(in, ",")
		got, err := ExpandHosts(CompressHosts(hosts))
		if err != nil || !slices.Equal(got, hosts) {
			t.Errorf("ExpandHosts(CompressHosts(%s)) = %q, %v", in, got, err)
		}
	}
	got, err := ExpandHosts("n[8-10],login")
	if want := []string{"n8", "n9", "n10", "login"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ExpandHosts(n[8-10],login) = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"n[1-", "n[3-1]", "n[a]", "n[1][2]", ",n1"} {
		if _, err := ExpandHosts(bad); err == nil {
			t.Errorf("ExpandHosts(%q) took it", bad)
		}
	}
}

func TestPatterns(t *testing.T) {
	t.Parallel()
	task := OutputVars{JobID: 17, ArrayJobID: 12, TaskID: 5, InArray: true, Node: "n01", User: "alice", Name: "relax"}
	plain := OutputVars{JobID: 9, Node: "n02", User: "bob"}
	for _, tc := range []struct {
		p    string
		v    OutputVars
		want string
	}{
		{"slurm-%j.out", task, "slurm-17.out"},
		{"%x-%A_%a.out", task, "relax-12_5.out"},
		{"%u/%N.%j.err", task, "alice/n01.17.err"},
		{"100%%-%j", task, "100%-17"},
		{"%x-%A_%a", plain, "shoal-9_0"},
		{"plain.txt", plain, "plain.txt"},
	} {
		if err := CheckPattern(tc.p); err != nil {
			t.Errorf("CheckPattern(%q) = %v", tc.p, err)
		}
		if got := ExpandPattern(tc.p, tc.v); got != tc.want {
			t.Errorf("ExpandPattern(%q) = %q, want %q", tc.p, got, tc.want)
		}
	}
	for _, bad := range []string{"out-%q", "out-%", "%J"} {
		if err := CheckPattern(bad); err == nil {
			t.Errorf("CheckPattern(%q) accepted an unknown pattern", bad)
		}
	}
}
