package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
)

func fp(v float64) *float64 { return &v }

func TestVivaldiRows(t *testing.T) {
	t.Parallel()
	pairs := []api.NetPair{
		{From: "a", To: "b", RTTms: fp(1.0), RTTEstms: fp(1.5)},
		{From: "b", To: "a", RTTms: fp(3.0), RTTEstms: fp(1.5)}, // direct: mean of 1 and 3
		{From: "a", To: "c", RTTEstms: fp(0.5)},                 // no direct RTT: left out
		{From: "c", To: "b", RTTms: fp(0.5)},                    // no estimate: left out
		{From: "c", To: "d", RTTms: fp(0.4), RTTEstms: fp(0.5)},
		{From: "d", To: "e", RTTms: fp(1), RTTEstms: fp(1.1)},
	}
	rows := vivaldiRows(pairs)
	if len(rows) != 3 || rows[0].A != "a" || rows[0].B != "b" || rows[0].Direct != 2 || rows[0].Est != 1.5 {
		t.Fatalf("rows = %+v", rows)
	}
	// Errors 0.25, 0.25, 0.10: median 0.25.
	if m, ok := medianRelErr(rows); !ok || math.Abs(m-0.25) > 1e-9 {
		t.Fatalf("median = %v, %v; want 0.25", m, ok)
	}
	var buf bytes.Buffer
	writeVivaldiTable(&buf, rows)
	if !strings.Contains(buf.String(), "c-d") || !strings.Contains(buf.String(), "median relative error over 3 pairs: 0.250; median |est - direct| 0.100 ms") {
		t.Fatalf("table:\n%s", buf.String())
	}
	if _, ok := medianRelErr(nil); ok {
		t.Fatal("median of nothing reported ok")
	}
}
