package netns

import (
	"strconv"
	"testing"
)

func TestDbgBurst(t *testing.T) {
	tb := UpForTest(t, twoNodes(50), Options{Logger: discardLogger()})
	port := 6000
	for _, burst := range []int{64 << 10, 128 << 10, 256 << 10, 64 << 10} {
		for _, n := range tb.Nodes() {
			for _, e := range [][2]string{{n.Namespace, "eth0"}, {tb.names.fabric(), n.Port}} {
				if _, err := run(t.Context(), "tc", "-n", e[0], "qdisc", "replace", "dev", e[1], "root", "tbf", "rate", "50mbit", "burst", strconv.Itoa(burst), "limit", strconv.Itoa(6250000/50+burst)); err != nil {
					t.Fatal(err)
				}
			}
		}
		var got []float64
		for range 3 {
			port++
			got = append(got, iperf3(t, tb, "a", "b", port, 3))
		}
		t.Logf("burst %d: %.1f", burst, got)
	}
}
