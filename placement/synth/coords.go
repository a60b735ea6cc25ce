package synth

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/placement"
)

// WithCoordinateRTTs returns a copy of s whose every link's RTT comes from
// Vivaldi network coordinates (hashicorp/serf/coordinate, as the agents
// keep them) instead of direct pings, marked RTTEstimated. The
// coordinates are fitted the way memberlist's failure detector feeds them:
// every round each node pings one random peer and updates its coordinate
// with that peer's coordinate and the round trip s says the pair has (the
// mean of its links' RTTs). rounds is the number of pings per node; the
// agents make one per second. errs are the relative errors
// |estimate - direct| / direct over the measured pairs.
func WithCoordinateRTTs(s placement.Snapshot, seed int64, rounds int) (out placement.Snapshot, errs []float64) {
	idx := make(map[string]int, len(s.Nodes))
	for i, n := range s.Nodes {
		idx[n.Name] = i
	}
	n := len(s.Nodes)
	sum, cnt := make(map[[2]int]float64), make(map[[2]int]int)
	for _, l := range s.Links {
		i, ok1 := idx[l.From]
		j, ok2 := idx[l.To]
		if !ok1 || !ok2 || i == j || l.RTTus <= 0 {
			continue
		}
		k := [2]int{min(i, j), max(i, j)}
		sum[k] += l.RTTus
		cnt[k]++
	}
	rtt := func(i, j int) (float64, bool) {
		k := [2]int{min(i, j), max(i, j)}
		if cnt[k] == 0 {
			return 0, false
		}
		return sum[k] / float64(cnt[k]), true
	}
	cfg := coordinate.DefaultConfig()
	cfg.Dimensionality = 8 // the agents' (nodestate.CoordDims, vivaldi.Config)
	clients := make([]*coordinate.Client, n)
	for i := range clients {
		c, err := coordinate.NewClient(cfg)
		if err != nil {
			panic(err) // DefaultConfig with 8 dimensions is valid
		}
		clients[i] = c
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x71fa1d1))
	for range rounds {
		for i := range n {
			j := r.IntN(n)
			us, ok := rtt(i, j)
			if j == i || !ok {
				continue
			}
			d := time.Duration(us * float64(time.Microsecond))
			if _, err := clients[i].Update(s.Nodes[j].Name, clients[j].GetCoordinate(), d); err != nil {
				panic(err) // only for a mismatched dimensionality or a bad RTT, neither possible here
			}
		}
	}
	est := func(i, j int) float64 {
		return float64(clients[i].GetCoordinate().DistanceTo(clients[j].GetCoordinate())) / 1e3
	}
	out = placement.Snapshot{Nodes: s.Nodes, Links: make([]placement.Link, len(s.Links))}
	copy(out.Links, s.Links)
	for k := range out.Links {
		l := &out.Links[k]
		i, ok1 := idx[l.From]
		j, ok2 := idx[l.To]
		if !ok1 || !ok2 || i == j {
			continue
		}
		l.RTTus, l.RTTEstimated = est(i, j), true
	}
	for k := range sum {
		d, _ := rtt(k[0], k[1])
		e := est(k[0], k[1])
		errs = append(errs, math.Abs(e-d)/d)
	}
	return out, errs
}
