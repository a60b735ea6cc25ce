package gossip

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/vivaldi"
)

func sampleCoord() *nodestate.Coord {
	return &nodestate.Coord{Vec: []float64{12.5, -3.25, 0, 7, 1, 2, 3, 4}, Error: 0.4, Adjust: -1.5, Height: 10}
}

// A peer's garbage ack payload is dropped with a debug line, never
// applied: the coordinate stays where it was.
func TestPingDelegateDropsBadPayload(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	cfg := TestConfig()
	cfg.Name = "p0"
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, err := New(cfg, nodestate.NodeState{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown()
	before := fmt.Sprint(*g.Coordinate())
	p := (*pinger)(g)
	peer := &memberlist.Node{Name: "p1"}
	for _, b := range [][]byte{{msgCoord, wireV1, '{'}, append([]byte{msgCoord, wireV1}, `{"v":[1,2],"e":1,"h":1}`...)} {
		p.NotifyPingComplete(peer, time.Millisecond, b)
	}
	if after := fmt.Sprint(*g.Coordinate()); after != before || g.CoordinateUpdates() != 0 {
		t.Fatalf("bad payloads moved the coordinate: %s -> %s, %d updates", before, after, g.CoordinateUpdates())
	}
	if !strings.Contains(logs.String(), "dropped coordinate in ping ack") {
		t.Fatalf("no debug line for the dropped payload; logs:\n%s", logs.String())
	}
	// A good payload does move it.
	good, _ := nodestate.EncodeCoordPayload(sampleCoord())
	p.NotifyPingComplete(peer, 3*time.Millisecond, good)
	if fmt.Sprint(*g.Coordinate()) == before || g.CoordinateUpdates() != 1 {
		t.Fatalf("a good payload did not move the coordinate")
	}
}

// The coordinates of a real loopback cluster move away from the origin,
// their error falls below serf's starting maximum, every node learns every
// node's coordinate by gossip, and the estimates are plausible loopback
// round trips.
func TestCoordinatesConverge(t *testing.T) {
	t.Parallel()
	nodes := joinedCluster(t, 3, "v")
	defer shutdownAll(nodes)
	const startErr = 1.5 // serf's VivaldiErrorMax, the error of a fresh coordinate
	waitFor(t, 30*time.Second, "every node to update its coordinate and see all three", func() bool {
		for _, g := range nodes {
			if g.CoordinateUpdates() < 3 || g.Coordinate().Error >= startErr {
				return false
			}
			n := 0
			for _, e := range g.Nodes() {
				if e.State.Coord != nil && e.State.Coord.Error < startErr {
					n++
				}
			}
			if n != 3 {
				return false
			}
		}
		return true
	}, func() string {
		s := ""
		for _, g := range nodes {
			s += fmt.Sprintf("%s: %d updates, error %.3f; ", g.cfg.Name, g.CoordinateUpdates(), g.Coordinate().Error)
		}
		return s
	})
	e0, _ := nodes[0].Node("v1")
	e1, _ := nodes[1].Node("v2")
	d, ok := vivaldi.EstimateRTT(e0.State.Coord, e1.State.Coord)
	if !ok || d <= 0 || d > 100*time.Millisecond {
		t.Fatalf("estimated v1-v2 RTT on loopback = %v, %v", d, ok)
	}
}

func TestCoordinatesOff(t *testing.T) {
	t.Parallel()
	cfg := TestConfig()
	cfg.Name, cfg.Coordinates = "off0", false
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	g, err := New(cfg, nodestate.NodeState{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown()
	g.Update(func(s *nodestate.NodeState) { s.Dyn.Users = 1 })
	if g.Coordinate() != nil || g.Self().Coord != nil {
		t.Fatal("coordinates off, yet the node has one")
	}
	cfg.Coordinates, cfg.CoordinateInterval = true, 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "CoordinateInterval") {
		t.Fatalf("zero CoordinateInterval: err = %v", err)
	}
}
