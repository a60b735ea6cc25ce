package netns

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// iperf3 measures from -> to over TCP for secs seconds (after omitting the
// first, where the token bucket's burst would inflate the figure) and
// returns the received rate in Mbit/s.
func iperf3(t *testing.T, tb *Testbed, from, to string, port, secs int) float64 {
	t.Helper()
	ctx := testCtx(t, time.Duration(secs+30)*time.Second)
	p := strconv.Itoa(port)
	srv, err := tb.Start(ctx, to, []string{"iperf3", "-s", "-1", "-p", p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitListening(ctx, to, port, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	ip, _ := tb.Node(to)
	out, err := tb.Run(ctx, from, "iperf3", "-c", ip.String(), "-p", p, "-t", strconv.Itoa(secs), "-O", "1", "-J")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := srv.Wait(); err != nil {
		log, _ := srv.Output()
		t.Fatalf("iperf3 server: %v\n%s", err, log)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("decode iperf3 -J: %v\n%s", err, out)
	}
	return res.End.SumReceived.BitsPerSecond / 1e6
}

// iperf3Within checks that iperf3 from -> to reads mbit within 15%, each
// run on the next port after *port. Runs are one after the other (an
// unshaped transfer takes both cores), the best of up to three: a busy
// host only ever lowers a measurement, and tbf never lets one run above
// the rate for long.
func iperf3Within(t *testing.T, tb *Testbed, port *int, name, from, to string, mbit float64) {
	t.Helper()
	var got []float64
	for range 3 {
		*port++
		v := iperf3(t, tb, from, to, *port, 3)
		got = append(got, v)
		if v > mbit*1.15 {
			t.Errorf("%s: %.1f Mbit/s, above %g mbit + 15%%", name, v, mbit)
			return
		}
		if v >= mbit*0.85 {
			t.Logf("iperf3 %s (%g mbit): %.1f Mbit/s (runs %.1f)", name, mbit, v, got)
			return
		}
	}
	t.Errorf("%s: runs %.1f Mbit/s, none within 15%% of %g", name, got, mbit)
}

func TestShapedLink_Iperf3WithinFifteenPercent(t *testing.T) {
	SkipIfUnavailable(t)
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("netns testbed: iperf3 not installed")
	}
	topo := Topology{
		Name:     "shaped-and-not",
		Switches: []Switch{{Name: "sw"}, {Name: "far"}},
		Nodes: []Node{
			{Name: "slow1", Switch: "sw", Mbit: 50},
			{Name: "slow2", Switch: "sw", Mbit: 50},
			{Name: "fast1", Switch: "sw", Unshaped: true},
			{Name: "fast2", Switch: "sw", Unshaped: true},
			{Name: "remote", Switch: "far", Mbit: 200},
		},
		Uplinks: []Uplink{{A: "sw", B: "far", Mbit: 30}},
	}
	tb := UpForTest(t, topo, Options{})
	port := 5201
	iperf3Within(t, tb, &port, "50 mbit node links", "slow1", "slow2", 50)
	iperf3Within(t, tb, &port, "200 mbit node, 30 mbit uplink", "fast1", "remote", 30)
	unshaped := iperf3(t, tb, "fast1", "fast2", 5300, 2)
	t.Logf("iperf3 unshaped veths: %.0f Mbit/s", unshaped)
	if unshaped < 500 {
		t.Errorf("unshaped link measured %.0f Mbit/s, want far above the 50 mbit link (>= 500)", unshaped)
	}
}

// An asymmetric node link and an asymmetric uplink are shaped per
// direction (mbit_in toward the node, mbit_ba from B to A), and
// SetNodeRates changes each direction of a running link.
func TestAsymmetricLinks_ShapedPerDirection(t *testing.T) {
	SkipIfUnavailable(t)
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("netns testbed: iperf3 not installed")
	}
	topo := Topology{
		Name:     "asymmetric",
		Switches: []Switch{{Name: "sw"}, {Name: "far"}},
		Nodes: []Node{
			{Name: "asym", Switch: "sw", Mbit: 60, MbitIn: 15},
			{Name: "peer", Switch: "sw", Mbit: 200},
			{Name: "remote", Switch: "far", Mbit: 200},
		},
		Uplinks: []Uplink{{A: "sw", B: "far", Mbit: 80, MbitBA: 20}},
	}
	tb := UpForTest(t, topo, Options{})
	port := 5400
	within := func(name, from, to string, mbit float64) {
		t.Helper()
		iperf3Within(t, tb, &port, name, from, to, mbit)
	}
	within("out of the asymmetric node", "asym", "peer", 60)
	within("into the asymmetric node", "peer", "asym", 15)
	within("uplink A to B", "peer", "remote", 80)
	within("uplink B to A", "remote", "peer", 20)
	ctx := testCtx(t, 30*time.Second)
	if err := tb.SetNodeRates(ctx, "asym", 10, 40); err != nil {
		t.Fatal(err)
	}
	within("out of the asymmetric node after SetNodeRates", "asym", "peer", 10)
	within("into the asymmetric node after SetNodeRates", "peer", "asym", 40)
}
