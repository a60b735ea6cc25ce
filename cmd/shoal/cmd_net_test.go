package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agentconfig"
)

func f(v float64) *float64 { return &v }

func TestWriteNetMatrix_UnmeasuredShownNotGuessed(t *testing.T) {
	t.Parallel()
	nodes := []api.Node{{Name: "a", Load: api.Means{M1: 0.5}}, {Name: "b", Load: api.Means{M1: 1.25}}, {Name: "c"}}
	pairs := []api.NetPair{
		{From: "a", To: "b", BWMbps: f(941.2), RTTms: f(0.183), MeasuredAt: time.Now()},
		{From: "b", To: "a", BWMbps: f(90.5), RTTms: f(0.2)},
		{From: "a", To: "c", RTTms: f(12.5)}, // RTT only: its bandwidth is unmeasured
	}
	var buf bytes.Buffer
	writeNetMatrix(&buf, nodes, pairs, "bw", false)
	out := buf.String()
	want := "available bandwidth from row to column, Mbit/s (light = high); row = from, column = to\n" +
		"           a     b     c\n" +
		"a              941     -\n" +
		"b       90.5           -\n" +
		"c          -     -      \n" +
		"load1m  0.50  1.25  0.00\n"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	buf.Reset()
	writeNetMatrix(&buf, nodes, pairs, "lat", true)
	if !strings.Contains(buf.String(), "\x1b[38;5;") || !strings.Contains(buf.String(), "12.5") {
		t.Fatalf("no heatmap colours in\n%s", buf.String())
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]uint64{"4MiB": 4 << 20, "500KB": 500000, "0": 0, "1GiB": 1 << 30, "123": 123, "1.5 MB": 1500000} {
		if got, err := agentconfig.ParseSize(in); err != nil || got != want {
			t.Errorf("agentconfig.ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "4XB", "-1"} {
		if _, err := agentconfig.ParseSize(in); err == nil {
			t.Errorf("agentconfig.ParseSize(%q) accepted", in)
		}
	}
}

// The bandwidth cell is the row-to-column direction; each row ends with
// its oldest figure's age, and --metric bw-age draws every cell's age.
func TestWriteNetMatrix_DirectionsAndAges(t *testing.T) {
	t.Parallel()
	nodes := []api.Node{{Name: "a"}, {Name: "b"}}
	pairs := []api.NetPair{
		{From: "a", To: "b", BWMbps: f(9.5), BWOutMbps: f(930), BWOutAgeS: f(61), BWInMbps: f(9.5), BWInAgeS: f(61)},
		{From: "b", To: "a", BWMbps: f(9.5), BWOutMbps: f(9.5), BWOutAgeS: f(4)},
	}
	var buf bytes.Buffer
	writeNetMatrix(&buf, nodes, pairs, "bw", false)
	want := "available bandwidth from row to column, Mbit/s (light = high); row = from, column = to\n" +
		"           a     b oldest s\n" +
		"a              930       61\n" +
		"b        9.5              4\n" +
		"load1m  0.00  0.00\n"
	if buf.String() != want {
		t.Fatalf("bw:\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	writeNetMatrix(&buf, nodes, pairs, "bw-age", false)
	if !strings.Contains(buf.String(), "age of each figure, s (light = fresh)") ||
		!strings.Contains(buf.String(), "\na               61       61\n") {
		t.Fatalf("bw-age:\n%s", buf.String())
	}
}
