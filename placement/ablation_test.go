package placement_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

// TestNetload_Ablation measures what each netload change buys; run with -v to
// see the table copied into docs/placement.md.
func TestNetload_Ablation(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	t.Parallel()
	type variant struct {
		name                           string
		startOnly, noPolish, unbounded bool
	}
	small := []variant{
		{"netload", false, false, false},
		{"  without local search", false, true, false},
		{"  scoring against the start only", true, false, false},
		{"  both off", true, true, false},
	}
	const clusters = 40
	for _, v := range small {
		sum, worst := 0.0, 0.0
		for seed := range int64(clusters) {
			snap := synth.Cluster(synth.Config{Nodes: 16, Switches: 3 + int(seed%2), Seed: seed})
			req := placement.Request{N: 16 * (1 + int(seed%3)), Force: true, Oversubscribe: true}
			o, err := placement.Oracle(snap, req)
			if err != nil {
				t.Fatal(err)
			}
			d, err := placement.PlaceAblated(snap, req, v.startOnly, v.noPolish, v.unbounded)
			if err != nil {
				t.Fatal(err)
			}
			r := d.Score.T / o.Score.T
			sum += r
			worst = max(worst, r)
		}
		t.Logf("16 nodes  %-34s mean T/oracle %.3f  worst %.3f", v.name, sum/clusters, worst)
	}
	// the bounded pool against the full search on a larger cluster
	for _, size := range []int{1000} {
		snap := synth.Cluster(synth.Config{Nodes: size, Switches: 4, Seed: 5})
		for _, n := range []int{64, 512} {
			req := placement.Request{N: n, Force: true, Oversubscribe: true}
			var line string
			for _, unb := range []bool{false, true} {
				start := time.Now()
				d, err := placement.PlaceAblated(snap, req, false, false, unb)
				if err != nil {
					t.Fatal(err)
				}
				line += fmt.Sprintf("  unbounded=%v: T %.4f in %v", unb, d.Score.T, time.Since(start).Round(time.Millisecond))
			}
			t.Logf("%d nodes n=%d%s", size, n, line)
		}
	}
}
