package raftfsm

import (
	"errors"
	"testing"
)

func TestConstraint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr  string
		node  []string
		match bool
	}{
		{"", nil, true},
		{"gpu", []string{"gpu", "ib"}, true},
		{"gpu", []string{"ib"}, false},
		{"intel&ib", []string{"intel"}, false},
		{"intel&ib", []string{"ib", "intel"}, true},
		{"intel&ib|amd", []string{"amd"}, true},
		{"intel&ib|amd", []string{"intel"}, false},
		{" a & b ", []string{"a", "b"}, true},
	} {
		c, err := ParseConstraint(tc.expr)
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		if got := c.Matches(tc.node); got != tc.match {
			t.Errorf("%q on %v = %v, want %v", tc.expr, tc.node, got, tc.match)
		}
	}
	for _, bad := range []string{"[a|b]", "ib*2", "a&", "|a", "a b", "a,b", "!a"} {
		if _, err := ParseConstraint(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want refused", bad, err)
		}
	}
}

// FuzzParseConstraint: any string a submit carries either parses into
// terms of valid features, which Matches answers for, or is refused as
// invalid; it never panics.
func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{"", "gpu", "a&b|c", "[a|b]", "a&&b", "x*2", " a "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConstraint(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: %v, not ErrInvalid", s, err)
			}
			return
		}
		for _, all := range c {
			for _, feat := range all {
				if CheckFeature(feat) != nil {
					t.Fatalf("%q parsed to an invalid feature %q", s, feat)
				}
			}
			if !c.Matches(all) {
				t.Fatalf("%q: a node with exactly the features %v of a term does not match", s, all)
			}
		}
	})
}
