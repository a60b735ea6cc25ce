package placement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// NetworkMatchesReference builds s's pair table with buildNetwork and with
// the straightforward reference (network_ref_test.go, the code before the
// speed work), both complements, dense and sparse, and reports the first
// figure that differs by even one bit. Decisions depend on nothing else of
// the links, so an optimisation that changes one fails here first.
func NetworkMatchesReference(s Snapshot) error {
	idx, err := validateSnapshot(s)
	if err != nil {
		return err
	}
	p := newProblem(&s, Request{N: 1, WLT: 0.25, WBW: 0.75, Alpha: 0.3, Attr: &AttrWeights{M1: 1}}, idx)
	n := len(p.nodes)
	// The same links, those after the first third as Pairs.
	chunked := WithPairs(s, len(s.Links)/3)
	if _, err := validateSnapshot(chunked); err != nil {
		return err
	}
	for _, global := range []bool{true, false} {
		for _, dense := range []bool{true, false} {
			if dense && n > denseMaxNodes {
				continue
			}
			want := refBuildNetwork(&s, idx, p.elig, p.net.group, p.net.ng, 0.25, 0.75, global, dense)
			for _, in := range []*Snapshot{&s, &chunked} {
				got := buildNetwork(in, idx, p.elig, p.net.group, p.net.ng, 0.25, 0.75, global, dense)
				if err := sameNetwork(got, want); err != nil {
					return fmt.Errorf("%d nodes, %d links, global %v, dense %v, pairs %v: %w", n, len(s.Links), global, dense, in == &chunked, err)
				}
			}
		}
	}
	return nil
}

// WithPairs returns s with its links after the first keep given as Pairs
// where they can be (measured, no directions): from the last link with
// directions on. Unmeasured links and links to unknown names among them
// are dropped, as placement ignores them.
func WithPairs(s Snapshot, keep int) Snapshot {
	idx := make(map[string]int, len(s.Nodes))
	for i, n := range s.Nodes {
		idx[n.Name] = i
	}
	start := min(keep, len(s.Links))
	for k := len(s.Links) - 1; k >= start; k-- {
		if l := &s.Links[k]; l.FwdMbps != 0 || l.RevMbps != 0 || l.FwdPeakMbps != 0 || l.RevPeakMbps != 0 {
			start = k + 1
			break
		}
	}
	rest := s.Links[start:]
	s.Links = s.Links[:start:start]
	s.Pairs = nil
	for _, l := range rest {
		f, okF := idx[l.From]
		t, okT := idx[l.To]
		if l.Measured && okF && okT {
			s.Pairs = append(s.Pairs, Pair{A: int32(f), B: int32(t), RTTms: l.RTTms, AvailMbps: l.AvailMbps, PeakMbps: l.PeakMbps})
		}
	}
	return s
}

// TestNetwork_EqualsReferenceRandomTables: random link tables with
// repeated, one-directional, unmeasured and unknown-name links, and
// traffic (the synthetic shapes are in the external test).
func TestNetwork_EqualsReferenceRandomTables(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		n := 2 + r.IntN(30)
		s := Snapshot{}
		perm := r.Perm(n) // names out of order, so eligible and snapshot indices differ
		for i := range n {
			s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("n%02d", perm[i]), Alive: r.IntN(8) > 0, Cores: 4,
				Switch: fmt.Sprint(i % 3), NetRx: float64(r.IntN(3)) * 1e7 * r.Float64(), NetTx: float64(r.IntN(3)) * 1e7 * r.Float64()})
		}
		for range r.IntN(2 * n * n) {
			a, b := r.IntN(n+1), r.IntN(n)
			from := fmt.Sprintf("n%02d", a) // n == len: a name the snapshot lacks
			l := Link{From: from, To: fmt.Sprintf("n%02d", b), RTTms: r.Float64(),
				PeakMbps: 1000, AvailMbps: 1000 * r.Float64(), Measured: r.IntN(10) > 0, Derived: r.IntN(2) == 0}
			if r.IntN(2) == 0 {
				l.FwdMbps, l.FwdPeakMbps = float32(900*r.Float64()), 1000
			}
			if r.IntN(2) == 0 {
				l.RevMbps, l.RevPeakMbps = float32(900*r.Float64()), float32(100+900*r.Float64())
			}
			s.Links = append(s.Links, l)
		}
		if err := NetworkMatchesReference(s); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
	}
}

func sameNetwork(got, want *network) error {
	eq := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	eqs := func(name string, a, b []float64) error {
		if len(a) != len(b) {
			return fmt.Errorf("%s has %d entries, want %d", name, len(a), len(b))
		}
		for i := range a {
			if !eq(a[i], b[i]) {
				return fmt.Errorf("%s[%d] = %v, want %v", name, i, a[i], b[i])
			}
		}
		return nil
	}
	if got.n != want.n || got.ng != want.ng || got.measured != want.measured {
		return fmt.Errorf("n, ng, measured = %d %d %d, want %d %d %d", got.n, got.ng, got.measured, want.n, want.ng, want.measured)
	}
	if !eq(got.worst, want.worst) || !eq(got.meanCost, want.meanCost) {
		return fmt.Errorf("worst, meanCost = %v %v, want %v %v", got.worst, got.meanCost, want.worst, want.meanCost)
	}
	for _, f := range []struct {
		name      string
		got, want []float64
	}{{"missing", got.missing, want.missing}, {"nodeMean", got.nodeMean, want.nodeMean}, {"nodePeak", got.nodePeak, want.nodePeak}} {
		if err := eqs(f.name, f.got, f.want); err != nil {
			return err
		}
	}
	for i := range want.n {
		for j := range want.n {
			if a, b := got.cost(i, j), want.cost(i, j); !eq(a, b) {
				return fmt.Errorf("cost(%d,%d) = %v, want %v", i, j, a, b)
			}
			a, okA := got.avail(i, j)
			b, okB := want.avail(i, j)
			if okA != okB || !eq(a, b) {
				return fmt.Errorf("avail(%d,%d) = %v,%v, want %v,%v", i, j, a, okA, b, okB)
			}
		}
	}
	return nil
}
