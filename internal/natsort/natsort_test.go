package natsort

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"n2", "n10", -1},
		{"n10", "n2", 1},
		{"n10", "n10", 0},
		{"", "", 0},
		{"", "n1", -1},
		{"n1", "n1a", -1},  // a prefix first
		{"n1a", "n1-b", 1}, // bytes as bytes after the number
		{"rack9-n3", "rack10-n1", -1},
		{"rack10-n1", "rack10-n2", -1},
		{"n01", "n1", -1}, // equal values: plain string order breaks the tie
		{"n1", "n01", 1},
		{"n001", "n01", -1},
		{"n02", "n1", 1}, // by value, not by the zeros
		{"a", "1", 1},    // a letter after a digit run, as '1' < 'a'
		{"-", "1", -1},   // '-' < '0'
		{"n99999999999999999999999", "n100000000000000000000000", -1}, // past uint64
		{"node", "node1", -1},
		{"N1", "n1", -1}, // no case folding
		{"10.0.0.2", "10.0.0.10", -1},
	} {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSort(t *testing.T) {
	t.Parallel()
	s := []string{"n10", "n2", "n1", "n01", "m3", "n", "n2a"}
	Sort(s)
	want := []string{"m3", "n", "n01", "n1", "n2", "n2a", "n10"}
	if !slices.Equal(s, want) {
		t.Errorf("Sort = %q, want %q", s, want)
	}
}

// token is one element of the naive reference's reading of a string: a
// number (a digit run) or a single other byte.
type token struct {
	num  *big.Int
	b    byte
	isNo bool
}

// naive is a deliberately plain reference: split into tokens with
// strings and math/big, compare token lists, break ties as strings.
func naive(a, b string) int {
	ta, tb := tokens(a), tokens(b)
	for k := 0; k < len(ta) && k < len(tb); k++ {
		x, y := ta[k], tb[k]
		var c int
		switch {
		case x.isNo && y.isNo:
			c = x.num.Cmp(y.num)
		case x.isNo:
			c = cmpFirst('0', y.b) // any digit sorts as a digit against a non-digit
		case y.isNo:
			c = cmpFirst(x.b, '0')
		default:
			c = cmpFirst(x.b, y.b)
		}
		if c != 0 {
			return c
		}
	}
	switch {
	case len(ta) > len(tb):
		return 1
	case len(ta) < len(tb):
		return -1
	}
	return strings.Compare(a, b)
}

func cmpFirst(x, y byte) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func tokens(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i {
			n, _ := new(big.Int).SetString(s[i:j], 10)
			out = append(out, token{num: n, isNo: true})
			i = j
			continue
		}
		out = append(out, token{b: s[i]})
		i++
	}
	return out
}

// randName draws names from a small alphabet so that digit runs, leading
// zeros, prefixes and ties are common.
func randName(r *rand.Rand) string {
	const alpha = "n0019-a."
	b := make([]byte, r.IntN(7))
	for i := range b {
		b[i] = alpha[r.IntN(len(alpha))]
	}
	return string(b)
}

// Compare agrees with the naive reference, and is a total order:
// antisymmetric, transitive, and 0 only for equal strings.
func TestCompare_Properties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 17))
	for range 20000 {
		a, b, c := randName(r), randName(r), randName(r)
		ab := Compare(a, b)
		if want := naive(a, b); ab != want {
			t.Fatalf("Compare(%q, %q) = %d, the reference says %d", a, b, ab, want)
		}
		if ba := Compare(b, a); ba != -ab {
			t.Fatalf("Compare(%q, %q) = %d but Compare(%q, %q) = %d", a, b, ab, b, a, ba)
		}
		if (ab == 0) != (a == b) {
			t.Fatalf("Compare(%q, %q) = %d: only equal strings compare equal", a, b, ab)
		}
		if ab < 0 && Compare(b, c) < 0 && Compare(a, c) >= 0 {
			t.Fatalf("not transitive: %q < %q < %q but Compare(%q, %q) = %d", a, b, c, a, c, Compare(a, c))
		}
	}
}

func FuzzCompare(f *testing.F) {
	f.Add("n2", "n10")
	f.Add("n01", "n1")
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := Compare(a, b), naive(a, b); got != want {
			t.Fatalf("Compare(%q, %q) = %d, the reference says %d", a, b, got, want)
		}
	})
}
