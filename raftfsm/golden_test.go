package raftfsm

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGolden_Trace replays scriptedTrace and compares each command's outcome and the final snapshot
// with testdata/trace.golden. Regenerate with: go test ./raftfsm -run Golden -update
func TestGolden_Trace(t *testing.T) {
	h := newHarness(t)
	trace := scriptedTrace(t)
	var out bytes.Buffer
	for _, l := range trace.log {
		res := h.f.Apply(l).(Result)
		typ := "?"
		if c, err := Decode(l.Data); err == nil {
			typ = c.Type
		}
		fmt.Fprintf(&out, "%3d %-17s ", l.Index, typ)
		switch {
		case res.Err != nil:
			fmt.Fprintf(&out, "refused %s: %v\n", Code(res.Err), res.Err)
		case res.Noop:
			fmt.Fprintf(&out, "noop job=%d attempt=%d\n", res.JobID, res.Attempt)
		default:
			fmt.Fprintf(&out, "ok job=%d attempt=%d jobs=%v\n", res.JobID, res.Attempt, res.JobIDs)
		}
		for i, r := range res.Results {
			fmt.Fprintf(&out, "    %d: ", i)
			switch {
			case r.Err != nil:
				fmt.Fprintf(&out, "refused %s: %v\n", Code(r.Err), r.Err)
			case r.Noop:
				fmt.Fprintf(&out, "noop job=%d attempt=%d\n", r.JobID, r.Attempt)
			default:
				fmt.Fprintf(&out, "ok job=%d attempt=%d jobs=%v index=%d\n", r.JobID, r.Attempt, r.JobIDs, r.Index)
			}
		}
	}
	out.WriteString("\n")
	if err := json.Indent(&out, snapshotBytes(t, h.f), "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteString("\n")

	path := filepath.Join("testdata", "trace.golden")
	if *update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("trace differs from %s (run with -update if the change is intended):\n%s", path, out.Bytes())
	}
}
