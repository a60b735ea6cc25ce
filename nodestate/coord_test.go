package nodestate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func sampleCoord() *Coord {
	return &Coord{Vec: []float64{12.5, -3.25, 0, 7, 1, 2, 3, 4}, Error: 0.4, Adjust: -1.5, Height: 10}
}

func TestCoordPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	b, err := EncodeCoordPayload(sampleCoord())
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeCoordPayload(b)
	if err != nil {
		t.Fatalf("decode own encoding: %v", err)
	}
	if fmt.Sprint(*c) != fmt.Sprint(*sampleCoord()) {
		t.Fatalf("round trip: got %+v, want %+v", *c, *sampleCoord())
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
		"too long":       body(`{"v":[0,0,0,0,0,0,0,0],"e":1,"h":10,"x":"` + strings.Repeat("x", MaxCoordPayload) + `"}`),
	}
	for name, b := range cases {
		if c, err := DecodeCoordPayload(b); err == nil {
			t.Errorf("%s: accepted %+v", name, *c)
		} else if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrMalformed or ErrTooLarge", name, err)
		}
	}
}

func TestStateWithBadCoordIsRejected(t *testing.T) {
	t.Parallel()
	s := sampleState()
	s.Coord = &Coord{Vec: []float64{1, 2, 3}, Error: 1, Height: 10}
	b, _ := EncodeState(&s)
	if _, err := DecodeState(b); !errors.Is(err, ErrMalformed) {
		t.Fatalf("state with a 3-dimensional coordinate: err = %v, want ErrMalformed", err)
	}
	s.Coord = sampleCoord()
	b, _ = EncodeState(&s)
	got, err := DecodeState(b)
	if err != nil || got.Coord == nil || fmt.Sprint(*got.Coord) != fmt.Sprint(*s.Coord) {
		t.Fatalf("state with a good coordinate: %v, %+v", err, got.Coord)
	}
}

// FuzzDecodeCoordPayload: whatever decodes validates and survives a
// round trip unchanged. That serf accepts it is tested where the
// coordinate is converted to serf's.
func FuzzDecodeCoordPayload(f *testing.F) {
	good, _ := EncodeCoordPayload(sampleCoord())
	f.Add(good)
	f.Add([]byte{msgCoord, wireV1, '{', '}'})
	f.Add(append([]byte{msgCoord, wireV1}, `{"v":[1,2,3],"e":1,"h":10}`...))
	f.Add(append([]byte{msgCoord, wireV1}, `{"v":[0,0,0,0,0,0,0,0],"e":0,"a":-9999999,"h":0}`...))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCoordPayload(b)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded coordinate fails validation: %v", err)
		}
		again, err := EncodeCoordPayload(c)
		if err != nil {
			t.Fatalf("a decoded coordinate does not encode: %v", err)
		}
		c2, err := DecodeCoordPayload(again)
		if err != nil || fmt.Sprint(*c2) != fmt.Sprint(*c) {
			t.Fatalf("round trip of a decoded coordinate: %+v, %v; want %+v", c2, err, *c)
		}
	})
}
