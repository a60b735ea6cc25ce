package netns

import (
	"os"
	"testing"
	"time"
)

// labEnv names a topology file to bring up by hand:
//
//	SHOAL_NETNS_LAB=../../testbed/lab12.json go test -run TestLab_UpByHand -v ./testcluster/netns/
const labEnv = "SHOAL_NETNS_LAB"

// TestLab_UpByHand brings a whole topology up, checks every node reaches
// every other, and reports how long Up and Close take. Opt-in: a 12-node lab
// with flows and hogs is slow to run on every `go test`.
func TestLab_UpByHand(t *testing.T) {
	path := os.Getenv(labEnv)
	if path == "" {
		t.Skip("set " + labEnv + "=path/to/topology.json to bring a lab up")
	}
	SkipIfUnavailable(t)
	topo, err := LoadTopology(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tb, err := Up(t.Context(), topo, Options{Logger: UpForTestLogger(t), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	upTook := time.Since(start)
	defer func() {
		start := time.Now()
		if err := tb.Close(); err != nil {
			t.Error(err)
		}
		t.Logf("%s: Up took %v, Close took %v", topo.Name, upTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		assertNoLeftovers(t, tb.Prefix())
	}()

	ctx := testCtx(t, 2*time.Minute)
	for _, from := range tb.Nodes() {
		for _, to := range tb.Nodes() {
			if from.Name == to.Name {
				continue
			}
			if out, err := tb.Run(ctx, from.Name, "ping", "-c", "1", "-W", "2", to.Name); err != nil {
				t.Errorf("ping %s -> %s: %v\n%s", from.Name, to.Name, err, out)
			}
		}
	}
	for _, p := range tb.Processes() {
		select {
		case <-p.Done():
			log, _ := p.Output()
			t.Errorf("background process on %s exited early: %v\n%s", p.Node(), p.Wait(), log)
		default:
		}
	}
	t.Logf("%d nodes reach each other; %d background processes running", len(tb.Nodes()), len(tb.Processes()))
}
