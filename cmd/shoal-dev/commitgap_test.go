package main

import (
	"strings"
	"testing"
	"time"
)

func TestGapsOfSplitsByHead(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	committed := map[uint64]stageAt{
		1: {"node1", t0},
		2: {"node1", t0},
		3: {"node2", t0},
		4: {"node1", t0}, // no launcher yet: left out
	}
	begun := map[uint64]stageAt{
		1: {"node3", t0.Add(70 * time.Millisecond)},
		2: {"node1", t0.Add(time.Millisecond)},
		3: {"node4", t0.Add(60 * time.Millisecond)},
	}
	g := gapsOf(committed, begun)
	if len(g.follower) != 2 || len(g.leader) != 1 {
		t.Fatalf("follower heads %v, leader heads %v: want 2 and 1", g.follower, g.leader)
	}
	if g.leader[0] != time.Millisecond {
		t.Errorf("the leader head's gap is %v, want 1ms", g.leader[0])
	}
	if m := median(g.follower); m != 65*time.Millisecond {
		t.Errorf("the follower heads' median is %v", m)
	}
}

// pct takes the lower rank: p90 of three spans is the second.
func TestPrintSpansRowsAndNone(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printSpans(&b, "title", "no job",
		spanRow{"empty", nil},
		spanRow{"some", []time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 20 * time.Millisecond}})
	want := "\ntitle:\n  empty: no job\n  some: median 20.0 ms, p90 20.0 ms of 3\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
