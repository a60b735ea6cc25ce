package placement_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

func TestParseHostfile(t *testing.T) {
	t.Parallel()
	got, err := placement.ParseHostfile("# lab\nnode01:4\nnode02 slots=2 max_slots=8\n\n  node03   # bare\nnode01:1\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []placement.HostSlots{{Host: "node01", Slots: 4}, {Host: "node02", Slots: 2}, {Host: "node03", Slots: 1}, {Host: "node01", Slots: 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, tc := range []struct{ text, msg string }{
		{"a:x", "line 1: slot count \"x\""},
		{"ok\nb:0", "line 2: slot count 0"},
		{"a slots=-1", "slot count -1"},
		{"a cpus=2", "unknown option \"cpus\""},
		{"a b", "unexpected \"b\""},
		{"a:2 slots=3", "unexpected"},
		{":3", "empty host name"},
		{"a,b:2", "not allowed"},
	} {
		_, err := placement.ParseHostfile(tc.text)
		if !errors.Is(err, placement.ErrHostfile) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: err %v, want %q", tc.text, err, tc.msg)
		}
	}
}

func TestFormatHostfile(t *testing.T) {
	t.Parallel()
	d := placement.Decision{Hosts: []placement.Host{{Node: "node02", NP: 4}, {Node: "node01", NP: 2}, {Node: "node03", NP: 1}, {Node: "gpu1", NP: 2}, {Node: "login", NP: 1}, {Node: "node07", NP: 1}}}
	for _, tc := range []struct{ format, want string }{
		{"mpich", "node02:4\nnode01:2\nnode03:1\ngpu1:2\nlogin:1\nnode07:1\n"},
		{"openmpi", "node02 slots=4\nnode01 slots=2\nnode03 slots=1\ngpu1 slots=2\nlogin slots=1\nnode07 slots=1\n"},
		{"slurm", "node[01-03,07],gpu1,login\n"},
	} {
		got, err := placement.FormatHostfile(d, tc.format)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q (%v), want %q", tc.format, got, err, tc.want)
		}
	}
	if _, err := placement.FormatHostfile(d, "pbs"); err == nil {
		t.Error("unknown format accepted")
	}
	if _, err := placement.FormatHostfile(placement.Decision{Wait: true, WaitReason: "busy"}, "mpich"); !errors.Is(err, placement.ErrWait) {
		t.Errorf("wait decision: %v", err)
	}
	if got := placement.CompressNodelist([]string{"n9", "n10", "n11", "a"}); got != "n9,n[10-11],a" {
		t.Errorf("mixed widths: %q", got)
	}
}

// FuzzParseHostfile: never panics, and what parses survives a round trip
// through both output formats.
func FuzzParseHostfile(f *testing.F) {
	for _, s := range []string{"a:1\nb slots=2\n# c\nd", "x:", "h slots=3 max_slots=4", "\x00:9", "a:99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		hs, err := placement.ParseHostfile(text)
		if err != nil {
			return
		}
		d := placement.Decision{}
		for _, h := range hs {
			if h.Slots < 1 || h.Host == "" {
				t.Fatalf("accepted %+v", h)
			}
			d.Hosts = append(d.Hosts, placement.Host{Node: h.Host, NP: h.Slots})
		}
		for _, format := range []string{"mpich", "openmpi"} {
			out, err := placement.FormatHostfile(d, format)
			if err != nil {
				t.Fatal(err)
			}
			back, err := placement.ParseHostfile(out)
			if err != nil || !slices.Equal(back, hs) {
				t.Fatalf("%s round trip: %v %v != %v", format, err, back, hs)
			}
		}
	})
}
