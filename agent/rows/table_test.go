package rows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

var t0 = time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)

func row(node string, boot int64, v uint64, bw float64) nodestate.NetRow {
	return nodestate.NetRow{Node: node, Boot: boot, V: v, Cells: []nodestate.NetEntry{{Peer: "p", AvailMbps: bw, BWAt: 1}}}
}

func TestTable_NewestVersionWins(t *testing.T) {
	t.Parallel()
	tb := NewTable()
	steps := []struct {
		r    nodestate.NetRow
		kept bool
		bw   float64
	}{
		{row("a", 10, 1, 100), true, 100},
		{row("a", 10, 3, 300), true, 300},
		{row("a", 10, 2, 200), false, 300}, // stale version of the same boot: dropped
		{row("a", 10, 3, 999), false, 300}, // same version: nothing new
		{row("a", 9, 50, 900), false, 300}, // an earlier boot, however high its counter
		{row("a", 11, 1, 110), true, 110},  // a restart starts counting again
	}
	for i, s := range steps {
		kept, err := tb.Put(s.r, t0)
		if err != nil || kept != s.kept {
			t.Fatalf("step %d: kept %v, %v; want %v", i, kept, err, s.kept)
		}
		if got, _ := tb.Get("a"); got.Cells[0].AvailMbps != s.bw {
			t.Fatalf("step %d: holds %+v, want bw %v", i, got, s.bw)
		}
	}
	// Get hands out a copy.
	got, _ := tb.Get("a")
	got.Cells[0].AvailMbps = -1
	if again, _ := tb.Get("a"); again.Cells[0].AvailMbps != 110 {
		t.Fatal("Get shares the table's cells")
	}
	var read float64
	if !tb.Read("a", func(r nodestate.NetRow) { read = r.Cells[0].AvailMbps }) || read != 110 || tb.Read("nobody", func(nodestate.NetRow) {}) {
		t.Fatalf("Read saw %v", read)
	}
}

func TestTable_RefusesBadAndTooMany(t *testing.T) {
	t.Parallel()
	tb := NewTable()
	big := nodestate.NetRow{Node: "a", Boot: 1, V: 1, Cells: make([]nodestate.NetEntry, nodestate.MaxNetCells+1)}
	for i := range big.Cells {
		big.Cells[i].Peer = "p"
	}
	if _, err := tb.Put(big, t0); err == nil || !strings.Contains(err.Error(), "at most 16384") {
		t.Fatalf("oversized row: %v", err)
	}
	if _, err := tb.Put(nodestate.NetRow{Node: "a", Cells: []nodestate.NetEntry{{Peer: "p", RTT1us: -3}}}, t0); err == nil {
		t.Fatal("negative RTT taken")
	}
	if tb.Len() != 0 {
		t.Fatalf("a refused row changed the table: %d rows", tb.Len())
	}
	tb.max = 2
	for _, n := range []string{"a", "b"} {
		if _, err := tb.Put(row(n, 1, 1, 1), t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.Put(row("c", 1, 1, 1), t0); err == nil || !strings.Contains(err.Error(), "at most 2") {
		t.Fatalf("third owner in a table of 2: %v", err)
	}
	if kept, err := tb.Put(row("a", 1, 2, 2), t0); !kept || err != nil {
		t.Fatalf("a full table must still take a newer row of a known owner: %v %v", kept, err)
	}
}

func TestTable_PruneFollowsGossip(t *testing.T) {
	t.Parallel()
	tb := NewTable()
	for _, n := range []string{"alive", "dead", "left", "reborn", "unknown-fresh", "unknown-old", "suspect"} {
		at := t0
		if n == "unknown-old" {
			at = t0.Add(-time.Hour)
		}
		if _, err := tb.Put(row(n, 5, 1, 1), at); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(name string, st nodestate.Status, boot int64) nodestate.Entry {
		return nodestate.Entry{State: nodestate.NodeState{Name: name, Boot: boot}, Status: st, HasState: true}
	}
	nodes := []nodestate.Entry{entry("alive", nodestate.StatusAlive, 5), entry("dead", nodestate.StatusDead, 5),
		entry("left", nodestate.StatusLeft, 5), entry("reborn", nodestate.StatusAlive, 6), entry("suspect", nodestate.StatusSuspect, 5)}
	gone := tb.Prune(t0, nodes, time.Minute)
	if strings.Join(gone, ",") != "dead,left,reborn,unknown-old" {
		t.Fatalf("pruned %v", gone)
	}
	var held []string
	for _, r := range tb.All() {
		held = append(held, r.Node)
	}
	if strings.Join(held, ",") != "alive,suspect,unknown-fresh" {
		t.Fatalf("holds %v", held)
	}
}

func TestTable_Delta(t *testing.T) {
	t.Parallel()
	tb := NewTable()
	cell := func(p string, bw float64) nodestate.NetEntry {
		return nodestate.NetEntry{Peer: p, AvailMbps: bw, BWAt: 1}
	}
	if _, err := tb.Put(nodestate.NetRow{Node: "a", Boot: 1, V: 2, Cells: []nodestate.NetEntry{cell("p", 1), cell("q", 2), cell("r", 3)}}, t0); err != nil {
		t.Fatal(err)
	}
	delta := nodestate.NetRow{Node: "a", Boot: 1, V: 4, Base: 2, Cells: []nodestate.NetEntry{cell("q", 20), cell("s", 40)}, Gone: []string{"r"}}
	if kept, err := tb.Put(delta, t0); !kept || err != nil {
		t.Fatalf("delta on its base: %v %v", kept, err)
	}
	got, _ := tb.Get("a")
	if got.V != 4 || got.Base != 0 || len(got.Gone) != 0 || len(got.Cells) != 3 ||
		got.Cells[0] != cell("p", 1) || got.Cells[1] != cell("q", 20) || got.Cells[2] != cell("s", 40) {
		t.Fatalf("after the delta: %+v", got)
	}
	if kept, err := tb.Put(delta, t0); kept || err != nil {
		t.Fatalf("the same delta again: %v %v", kept, err)
	}
	for name, d := range map[string]nodestate.NetRow{
		"another base":  {Node: "a", Boot: 1, V: 6, Base: 5, Cells: []nodestate.NetEntry{cell("p", 9)}},
		"another boot":  {Node: "a", Boot: 2, V: 6, Base: 4, Cells: []nodestate.NetEntry{cell("p", 9)}},
		"unknown owner": {Node: "b", Boot: 1, V: 2, Base: 1},
	} {
		if _, err := tb.Put(d, t0); !errors.Is(err, ErrNeedFull) {
			t.Errorf("%s: %v, want ErrNeedFull", name, err)
		}
	}
	if got, _ := tb.Get("a"); got.V != 4 || got.Cells[0].AvailMbps != 1 {
		t.Fatalf("a refused delta changed the row: %+v", got)
	}
	if _, err := tb.Put(nodestate.NetRow{Node: "a", Boot: 1, V: 5, Base: 5}, t0); err == nil {
		t.Fatal("a delta to its own base taken")
	}
}
