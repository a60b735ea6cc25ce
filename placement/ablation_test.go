package placement_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

// TestNetload_Ablation measures what each netload change buys, and holds the
// table copied into docs/design/placement.md (run with -v to see it) to what that
// page says of it.
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
	mean, worstOf := map[string]float64{}, map[string]float64{}
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
		mean[v.name], worstOf[v.name] = sum/clusters, worst
	}
	// What docs/design/placement.md claims from this table: netload finds the oracle's T (measured
	// 1.000/1.000), no ablation does better, and some ablation costs something, or the
	// ablation measures nothing. Measured with the compute load as shares: without
	// local search 1.016, worst 1.323, both off 1.005, worst 1.076; with Eq. 1's compute load
	// 1.023 / 1.325 and 1.023 / 1.254. The 0.002 (not 0.005): a variant of the shares left
	// local search worth 1.001 / 1.026 only, and the test must not decide which T is right.
	full := small[0].name
	if mean[full] > 1.005 || worstOf[full] > 1.05 {
		t.Errorf("netload: mean T/oracle %.3f, worst %.3f; want within 0.5%% of the oracle on average and 5%% at worst",
			mean[full], worstOf[full])
	}
	costly := false
	for _, v := range small[1:] {
		if mean[v.name] < mean[full]-1e-9 {
			t.Errorf("%q: mean T/oracle %.4f beats the full netload's %.4f", strings.TrimSpace(v.name), mean[v.name], mean[full])
		}
		costly = costly || (mean[v.name] >= mean[full]+0.002 && worstOf[v.name] >= worstOf[full]+0.1)
	}
	if !costly {
		t.Errorf("no ablation costs >= 0.002 on average and 0.1 at worst against netload's %.3f, %.3f: the table measures nothing", mean[full], worstOf[full])
	}
	// the bounded pool against the full search on a larger cluster
	for _, size := range []int{1000} {
		snap := synth.Cluster(synth.Config{Nodes: size, Switches: 4, Seed: 5})
		for _, n := range []int{64, 512} {
			req := placement.Request{N: n, Force: true, Oversubscribe: true}
			var line string
			var ts [2]float64
			for i, unb := range []bool{false, true} {
				start := time.Now()
				d, err := placement.PlaceAblated(snap, req, false, false, unb)
				if err != nil {
					t.Fatal(err)
				}
				line += fmt.Sprintf("  unbounded=%v: T %.4f in %v", unb, d.Score.T, time.Since(start).Round(time.Millisecond))
				ts[i] = d.Score.T
			}
			t.Logf("%d nodes n=%d%s", size, n, line)
			// The bounded pool costs at most 1% of T (measured: nothing).
			if ts[0] > 1.01*ts[1] {
				t.Errorf("%d nodes n=%d: bounded pool T %.4f, full search %.4f: more than 1%% worse", size, n, ts[0], ts[1])
			}
		}
	}
}
