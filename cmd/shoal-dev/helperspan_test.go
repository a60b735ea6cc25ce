package main

import (
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/internal/launchtrace"
)

func TestSpansOfPairsOnOneNode(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(node string, job uint64, stage launchtrace.Stage, ms int) nodeEvent {
		return nodeEvent{node, launchtrace.Event{Stage: stage, Job: job, Attempt: 1, At: t0.Add(time.Duration(ms) * time.Millisecond)}}
	}
	s := spansOf([]nodeEvent{
		// The head: its launcher, then its own proxy through the remote shell.
		at("node1", 1, launchtrace.HelperStarted, 130),
		at("node1", 1, launchtrace.LauncherBegin, 100),
		at("node1", 1, launchtrace.ExecReceived, 200),
		at("node1", 1, launchtrace.HelperStarted, 207),
		// Another node: its exec's helper; node1's exec must not pair with it.
		at("node2", 1, launchtrace.ExecReceived, 150),
		at("node2", 1, launchtrace.HelperStarted, 160),
		// A helper with no trigger before it (a stage line lost): left out.
		at("node3", 1, launchtrace.HelperStarted, 170),
		// Another job on node2, two execs before their helpers.
		at("node2", 2, launchtrace.ExecReceived, 300),
		at("node2", 2, launchtrace.ExecReceived, 301),
		at("node2", 2, launchtrace.HelperStarted, 305),
		at("node2", 2, launchtrace.HelperStarted, 311),
	})
	if !slices.Equal(s.launcher, []time.Duration{30 * time.Millisecond}) {
		t.Errorf("launcher spans %v, want [30ms]", s.launcher)
	}
	slices.Sort(s.exec)
	if want := []time.Duration{5 * time.Millisecond, 7 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}; !slices.Equal(s.exec, want) {
		t.Errorf("exec spans %v, want %v", s.exec, want)
	}
}
