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
