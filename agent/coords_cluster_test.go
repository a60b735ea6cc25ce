package agent_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// Network coordinates end to end: agents with coordinates on
// learn each other's coordinates from gossip's pings and show an estimate
// for each of their pairs in GET /v1/net and in 'shoal rtt'; a node with
// --coordinates=false has none, and 'shoal rtt' says so and fails.
func TestCoordinates_EstimateEveryPair(t *testing.T) {
	t.Parallel()
	bin := testcluster.BuildShoal(t)
	const n = 3
	c := testcluster.New(t, n, testcluster.Options{Twins: true, Bin: bin, Configure: func(i int, cfg *agent.Config) {
		cfg.Gossip.Coordinates = i != 2
	}})
	c.WaitLeader(45 * time.Second)
	a, b, off := c.Name(0), c.Name(1), c.Name(2)
	est := func(ps []api.NetPair, from, to string) *float64 {
		for _, p := range ps {
			if p.From == from && p.To == to {
				return p.RTTEstms
			}
		}
		return nil
	}
	var last []api.NetPair
	testcluster.WaitFor(t, 45*time.Second, "every node to show an estimate for the pairs of nodes with coordinates", func() bool {
		for i := range n {
			ps, err := c.Client(i).Net(context.Background())
			if err != nil {
				return false
			}
			last = ps
			for _, pr := range [][2]string{{a, b}, {b, a}} {
				if e := est(ps, pr[0], pr[1]); e == nil || *e <= 0 || *e > 100 {
					return false
				}
			}
		}
		return true
	}, func() string {
		return strings.TrimSpace(strings.ReplaceAll(strings.Join(pairsText(last), "; "), "\n", " "))
	})
	for _, pr := range [][2]string{{a, off}, {off, a}, {b, off}} {
		if e := est(last, pr[0], pr[1]); e != nil {
			t.Fatalf("pair %s-%s has an estimate %v, but %s runs with coordinates off", pr[0], pr[1], *e, off)
		}
	}
	rtt := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append([]string{"rtt", "--addr", "https://127.0.0.1:" + strconv.Itoa(c.Agent(0).HTTPPort()),
			"--token", c.Token()}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := rtt(b); err != nil || !strings.Contains(out, "Estimated "+b+" <-> "+a+" rtt: ") {
		t.Fatalf("shoal rtt %s (the other end: the agent asked): %v\n%s", b, err, out)
	}
	if out, err := rtt(a, off); err == nil || !strings.Contains(out, "no coordinate estimate for "+a+" <-> "+off) {
		t.Fatalf("shoal rtt %s %s, with coordinates off on %s: err %v\n%s", a, off, off, err, out)
	}
}

func pairsText(ps []api.NetPair) []string {
	var out []string
	for _, p := range ps {
		s := p.From + ">" + p.To
		if p.RTTEstms != nil {
			s += " est=" + strconv.FormatFloat(*p.RTTEstms, 'f', 3, 64)
		}
		out = append(out, s)
	}
	return out
}
