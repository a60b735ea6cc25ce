package vivaldi

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/nodestate"
)

func sampleCoord() *nodestate.Coord {
	return &nodestate.Coord{Vec: []float64{12.5, -3.25, 0, 7, 1, 2, 3, 4}, Error: 0.4, Adjust: -1.5, Height: 10}
}

// The distance of a coordinate to itself is its two heights plus twice
// the adjustment: 2*10 - 2*1.5 = 17 µs (serf's formula), which checks
// the conversion from microseconds to serf's seconds.
func TestEstimateRTTSelf(t *testing.T) {
	t.Parallel()
	c := sampleCoord()
	if d, ok := EstimateRTT(c, c); !ok || d != 17*time.Microsecond {
		t.Fatalf("EstimateRTT(self) = %v, %v; want 17µs", d, ok)
	}
}

// A coordinate survives the trip to serf's form and back, and serf's
// distance between two is the one their gossiped forms predict.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := sampleCoord()
	if got := FromSerf(ToSerf(c)); fmt.Sprint(*got) != fmt.Sprint(*c) {
		t.Fatalf("FromSerf(ToSerf(c)) = %+v, want %+v", *got, *c)
	}
	s := &coordinate.Coordinate{Vec: []float64{0.001, 0, 0, 0, 0, 0, 0, 0}, Error: 0.123456, Adjustment: 2e-6, Height: 1.0000049e-5}
	got := FromSerf(s)
	want := nodestate.Coord{Vec: []float64{1000, 0, 0, 0, 0, 0, 0, 0}, Error: 0.1235, Adjust: 2, Height: 10}
	if fmt.Sprint(*got) != fmt.Sprint(want) {
		t.Fatalf("FromSerf = %+v, want %+v (µs to 0.01, error to 4 decimals)", *got, want)
	}
	o := &nodestate.Coord{Vec: []float64{4000, 0, 0, 0, 0, 0, 0, 0}, Error: 0.1, Height: 10}
	d, ok := EstimateRTT(got, o)
	// 3,000 µs apart, both heights, the first's adjustment.
	if want := 3000 + 10 + 10 + 2; !ok || math.Abs(float64(d)/1e3-float64(want)) > 0.01 {
		t.Fatalf("EstimateRTT = %v, %v; want %d µs", d, ok, want)
	}
}

// Missing, invalid or incomparable coordinates estimate nothing, where
// serf would panic (another dimensionality) or answer NaN.
func TestNoEstimate(t *testing.T) {
	t.Parallel()
	good := sampleCoord()
	for name, pair := range map[string][2]*nodestate.Coord{
		"none":         {nil, good},
		"3 dimensions": {{Vec: []float64{1, 2, 3}, Error: 1, Height: 10}, good},
		"negative h":   {good, {Vec: make([]float64, 8), Error: 1, Height: -1}},
	} {
		if d, ok := EstimateRTT(pair[0], pair[1]); ok {
			t.Errorf("%s: EstimateRTT = %v, true", name, d)
		}
	}
	if ToSerf(&nodestate.Coord{Vec: []float64{1}}) != nil {
		t.Error("ToSerf converted an invalid coordinate")
	}
	a := &coordinate.Coordinate{Vec: []float64{0, 0}, Height: 1e-5}
	b := &coordinate.Coordinate{Vec: []float64{0, 0, 0}, Height: 1e-5}
	nan := &coordinate.Coordinate{Vec: []float64{math.NaN(), 0}, Height: 1e-5}
	for name, p := range map[string][2]*coordinate.Coordinate{"nil": {a, nil}, "dimensions": {a, b}, "NaN": {a, nan}} {
		if d, ok := Distance(p[0], p[1]); ok {
			t.Errorf("%s: Distance = %v, true", name, d)
		}
	}
}

// FuzzSerfTakesDecodedCoord: whatever the decoder accepts, serf accepts
// and can compare.
func FuzzSerfTakesDecodedCoord(f *testing.F) {
	good, _ := nodestate.EncodeCoordPayload(sampleCoord())
	f.Add(good)
	f.Add([]byte{'c', 1, '{', '}'})
	f.Add(append([]byte{'c', 1}, `{"v":[1,2,3],"e":1,"h":10}`...))
	f.Add(append([]byte{'c', 1}, `{"v":[0,0,0,0,0,0,0,0],"e":0,"a":-9999999,"h":0}`...))
	ref := sampleCoord()
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := nodestate.DecodeCoordPayload(b)
		if err != nil {
			return
		}
		d, ok := EstimateRTT(c, ref)
		if !ok || d < 0 {
			t.Fatalf("EstimateRTT = %v, %v", d, ok)
		}
		cl, err := coordinate.NewClient(Config())
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.SetCoordinate(ToSerf(c)); err != nil {
			t.Fatalf("serf refuses a decoded coordinate: %v", err)
		}
	})
}
