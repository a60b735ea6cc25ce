package main

import (
	"fmt"
	"testing"
)

// TestCasesRandomCeiling computes, under each case's configured rates, what
// the best group gains over random placement if a job's time were
// inversely proportional to its group's slowest pair (a model, not a
// measurement): 1 - t(oracle) / E[t(random)], with random uniform over the
// 4-node groups of nodes that have a free core (no hog node; shoal gives a
// hog node no slot). The model understates what halo shows: on lab12 its
// time rose 2.0x from the oracle's 30 Mbit/s group to random's typical 20
// Mbit/s ones (measured with -policies random,oracle on lab12), where the
// model says 1.5x. The cases written for the experiment must clear the
// issue's 45 % even under the model; lab12 (30.8 % under it) is logged.
func TestCasesRandomCeiling(t *testing.T) {
	t.Parallel()
	for _, c := range casePhases {
		t.Run(fmt.Sprintf("%s/%d", c.name, c.phase), func(t *testing.T) {
			t.Parallel()
			m, oracle, best := caseOracle(t, c.name, c.phase)
			hogs := map[string]bool{}
			for _, h := range m.topo.Hogs {
				hogs[h.Node] = true
			}
			var free []string
			for _, n := range nodeNames(m.topo) {
				if !hogs[n] {
					free = append(free, n)
				}
			}
			sum, n := 0.0, 0
			for _, g := range groupsOf(free, 4) {
				v, _, _ := m.groupStats(g)
				sum += 1 / v
				n++
			}
			ceiling := 1 - (1/best)/(sum/float64(n))
			t.Logf("oracle %v at %.0f Mbit/s; random's expected time %.2f x the oracle's: ceiling %.1f %% over random",
				oracle, best, sum/float64(n)*best, 100*ceiling)
			if c.name != "lab12" && ceiling < 0.45 {
				t.Errorf("%s/%d: the best group is only %.1f %% faster than random's expectation: the case cannot show the 45 %% target", c.name, c.phase, 100*ceiling)
			}
		})
	}
}
