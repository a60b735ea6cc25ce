package gossip

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/coordinate"
	"github.com/shoal-hpc/shoal/nodestate"
)

func sampleCoord() *nodestate.Coord {
	return &nodestate.Coord{Vec: []float64{12.5, -3.25, 0, 7, 1, 2, 3, 4}, Error: 0.4, Adjust: -1.5, Height: 10}
}

func TestCoordPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	b, err := nodestate.EncodeCoordPayload(sampleCoord())
	if err != nil {
		t.Fatal(err)
	}
	c, err := nodestate.DecodeCoordPayload(b)
	if err != nil {
		t.Fatalf("decode own encoding: %v", err)
	}
	if fmt.Sprint(*c) != fmt.Sprint(*sampleCoord()) {
		t.Fatalf("round trip: got %+v, want %+v", *c, *sampleCoord())
	}
	// The distance of a coordinate to itself is its two heights plus
	// twice the adjustment: 2*10 - 2*1.5 = 17 µs (serf's formula).
	if d, ok := EstimateRTT(c, c); !ok || d != 17*time.Microsecond {
		t.Fatalf("EstimateRTT(self) = %v, %v; want 17µs", d, ok)
	}
}

func TestDecodeCoordPayloadRejectsGarbage(t *testing.T) {
	t.Parallel()
	body := func(js string) []byte { return append([]byte{msgCoord, wireV1}, js...) }
	cases := map[string][]byte{
		"empty":          nil,
		"header only":    {msgCoord},
		"wrong type":     append([]byte{msgState, wireV1}, `{"v":[0,0,0,0,0,0,0,0]}`...),
		"wrong version":  append([]byte{msgCoord, 9}, `{"v":[0,0,0,0,0,0,0,0]}`...),
		"not json":       body("not json"),
		"no vector":      body(`{"e":1,"h":10}`),
		"3 dimensions":   body(`{"v":[1,2,3],"e":1,"h":10}`),
		"9 dimensions":   body(`{"v":[1,2,3,4,5,6,7,8,9],"e":1,"h":10}`),
		"huge component": body(`{"v":[1e300,0,0,0,0,0,0,0],"e":1,"h":10}`),
		"overflow":       body(`{"v":[1e999,0,0,0,0,0,0,0],"e":1,"h":10}`),
		"negative h":     body(`{"v":[0,0,0,0,0,0,0,0],"e":1,"h":-1}`),
		"negative e":     body(`{"v":[0,0,0,0,0,0,0,0],"e":-1,"h":10}`),
		"huge error":     body(`{"v":[0,0,0,0,0,0,0,0],"e":1e9,"h":10}`),
		"huge adjust":    body(`{"v":[0,0,0,0,0,0,0,0],"e":1,"a":-1e12,"h":10}`),
		"too long":       body(`{"v":[0,0,0,0,0,0,0,0],"e":1,"h":10,"x":"` + strings.Repeat("x", nodestate.MaxCoordPayload) + `"}`),
	}
	for name, b := range cases {
		if c, err := nodestate.DecodeCoordPayload(b); err == nil {
			t.Errorf("%s: accepted %+v", name, *c)
		} else if !errors.Is(err, nodestate.ErrMalformed) && !errors.Is(err, nodestate.ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrMalformed or ErrTooLarge", name, err)
		}
	}
}

func TestStateWithBadCoordIsRejected(t *testing.T) {
	t.Parallel()
	s := sampleState()
	s.Coord = &nodestate.Coord{Vec: []float64{1, 2, 3}, Error: 1, Height: 10}
	b, _ := nodestate.EncodeState(&s)
	if _, err := nodestate.DecodeState(b); !errors.Is(err, nodestate.ErrMalformed) {
		t.Fatalf("state with a 3-dimensional coordinate: err = %v, want ErrMalformed", err)
	}
	s.Coord = sampleCoord()
	b, _ = nodestate.EncodeState(&s)
	got, err := nodestate.DecodeState(b)
	if err != nil || got.Coord == nil || fmt.Sprint(*got.Coord) != fmt.Sprint(*s.Coord) {
		t.Fatalf("state with a good coordinate: %v, %+v", err, got.Coord)
	}
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

func FuzzDecodeCoordPayload(f *testing.F) {
	good, _ := nodestate.EncodeCoordPayload(sampleCoord())
	f.Add(good)
	f.Add([]byte{msgCoord, wireV1, '{', '}'})
	f.Add(append([]byte{msgCoord, wireV1}, `{"v":[1,2,3],"e":1,"h":10}`...))
	f.Add(append([]byte{msgCoord, wireV1}, `{"v":[0,0,0,0,0,0,0,0],"e":0,"a":-9999999,"h":0}`...))
	ref := sampleCoord()
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := nodestate.DecodeCoordPayload(b)
		if err != nil {
			return
		}
		// Whatever decodes must validate and be safe to compare: serf
		// panics on a dimensionality conflict.
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded coordinate fails validation: %v", err)
		}
		d, ok := EstimateRTT(c, ref)
		if !ok || d < 0 {
			t.Fatalf("EstimateRTT = %v, %v", d, ok)
		}
		if _, err := newCoordClientWith(c); err != nil {
			t.Fatalf("serf refuses a decoded coordinate: %v", err)
		}
	})
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
	d, ok := EstimateRTT(e0.State.Coord, e1.State.Coord)
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

// newCoordClientWith returns a client placed at c, for tests that check
// serf accepts what the decoder accepts.
func newCoordClientWith(c *nodestate.Coord) (*coordinate.Client, error) {
	cl, err := newCoordClient()
	if err != nil {
		return nil, err
	}
	return cl, cl.SetCoordinate(toSerf(c))
}
