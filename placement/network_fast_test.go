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
// the links, so an optimisation that changes one fails here first. alt,
// when given, is the same snapshot with the derived links as a Model, and
// must give the same table.
func NetworkMatchesReference(s Snapshot, alt *Snapshot) error {
	idx, err := validateSnapshot(s)
	if err != nil {
		return err
	}
	p := newProblem(&s, Request{N: 1, WLT: 0.25, WBW: 0.75, Alpha: 0.3, Attr: &AttrWeights{M1: 1}}, idx)
	n := len(p.nodes)
	ins := []*Snapshot{&s}
	if alt != nil {
		if _, err := validateSnapshot(*alt); err != nil {
			return err
		}
		ins = append(ins, alt)
	}
	for _, global := range []bool{true, false} {
		for _, dense := range []bool{true, false} {
			if dense && n > denseMaxNodes {
				continue
			}
			for _, in := range ins {
				// The uplink term needs the model's switches: the reference
				// takes them from the input it is compared with.
				want := refBuildNetwork(&s, in.Model, idx, p.elig, p.net.group, p.net.ng, 0.25, 0.75, global, dense)
				for _, eager := range []bool{true, false} {
					got := buildNetwork(in, idx, p.elig, p.net.group, p.net.ng, 0.25, 0.75, global, dense, eager)
					if err := sameNetwork(got, want); err != nil {
						return fmt.Errorf("%d nodes, %d links, global %v, dense %v, model %v, eager %v: %w", n, len(s.Links), global, dense, in.Model != nil, eager, err)
					}
				}
			}
		}
	}
	return nil
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
				Switch: fmt.Sprint(i % 3), NetRxBytesPerSec: float64(r.IntN(3)) * 1e7 * r.Float64(), NetTxBytesPerSec: float64(r.IntN(3)) * 1e7 * r.Float64()})
		}
		for range r.IntN(2 * n * n) {
			a, b := r.IntN(n+1), r.IntN(n)
			from := fmt.Sprintf("n%02d", a) // n == len: a name the snapshot lacks
			l := Link{From: from, To: fmt.Sprintf("n%02d", b), RTTus: 1e3 * r.Float64(),
				PeakMbps: 1000, AvailMbps: 1000 * r.Float64(), Measured: r.IntN(10) > 0, Derived: r.IntN(2) == 0}
			if r.IntN(2) == 0 {
				l.OutMbps, l.PeakOutMbps = float32(900*r.Float64()), 1000
			}
			if r.IntN(2) == 0 {
				l.InMbps, l.PeakInMbps = float32(900*r.Float64()), float32(100+900*r.Float64())
			}
			s.Links = append(s.Links, l)
		}
		if err := NetworkMatchesReference(s, nil); err != nil {
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
	if !eq(got.worst, want.worst) || !eq(got.meanCost, want.meanCost) || !eq(got.medianCost, want.medianCost) {
		return fmt.Errorf("worst, meanCost, medianCost = %v %v %v, want %v %v %v", got.worst, got.meanCost, got.medianCost, want.worst, want.meanCost, want.medianCost)
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
