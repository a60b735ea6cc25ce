package placement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The sparse (CSR) pair table answers like the dense triangle (which sums in
// float32, hence the relative tolerance), including repeated and
// one-directional links, gaps and unknown names.
func TestNetwork_SparseEqualsDense(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 2 + r.IntN(30)
		s := Snapshot{}
		for i := range n {
			s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("n%02d", i), Alive: true, Cores: 4, Switch: fmt.Sprint(i % 3)})
		}
		for range r.IntN(n * n) {
			a, b := r.IntN(n+1), r.IntN(n)
			from := fmt.Sprintf("n%02d", a) // n == len: a name the snapshot lacks
			s.Links = append(s.Links, Link{From: from, To: s.Nodes[b].Name, RTTus: 1e3 * r.Float64(),
				PeakMbps: 1000, AvailMbps: 1000 * r.Float64(), Measured: r.IntN(10) > 0})
		}
		idx, err := validateSnapshot(s)
		if err != nil {
			t.Fatal(err)
		}
		p := newProblem(&s, Request{N: 1, WLT: 0.25, WBW: 0.75, Alpha: 0.3, Attr: &AttrWeights{M1: 1}}, idx)
		group := p.net.group
		for _, global := range []bool{true, false} {
			d := buildNetwork(&s, idx, p.elig, group, p.net.ng, 0.25, 0.75, global, true, true)
			sp := buildNetwork(&s, idx, p.elig, group, p.net.ng, 0.25, 0.75, global, false, false)
			for i := range n {
				for j := range n {
					if a, b := d.cost(i, j), sp.cost(i, j); math.Abs(a-b) > 1e-5*math.Max(a, b) {
						t.Fatalf("trial %d: cost(%d,%d) dense %v sparse %v", trial, i, j, a, b)
					}
					a1, ok1 := d.avail(i, j)
					a2, ok2 := sp.avail(i, j)
					if ok1 != ok2 || math.Abs(a1-a2) > 1e-5*math.Max(a1, a2) {
						t.Fatalf("trial %d: avail(%d,%d) dense %v,%v sparse %v,%v", trial, i, j, a1, ok1, a2, ok2)
					}
					if i != j && d.cost(i, j) <= 0 && d.measured < n*(n-1)/2 {
						if _, ok := d.avail(i, j); !ok {
							t.Fatalf("trial %d: unmeasured pair (%d,%d) costs %v: a perfect link", trial, i, j, d.cost(i, j))
						}
					}
				}
			}
		}
	}
}
