package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/testcluster"
)

// helperSpans is, per job process, the time from the moment the agent
// was due to start it to the moment its job helper had executed it: on
// the head from the launcher's begin to the launcher's helper, on any
// node from a remote exec's arrival (`shoal rsh`, a copy) to that
// command's helper. The stage table takes each stage at its latest node,
// which pairs one node's exec with another's helper; these are paired on
// one node.
type helperSpans struct{ launcher, exec []time.Duration }

// nodeEvent is one stage line of one agent's log.
type nodeEvent struct {
	node string
	e    launchtrace.Event
}

// readHelperSpans reads the stage lines of each agent's log.
func readHelperSpans(p *testcluster.ProcCluster) (helperSpans, error) {
	var all []nodeEvent
	for _, n := range p.Nodes {
		f, err := os.Open(n.Log)
		if err != nil {
			return helperSpans{}, fmt.Errorf("agent log: %w", err)
		}
		ev, err := launchtrace.Parse(f)
		f.Close()
		if err != nil {
			return helperSpans{}, fmt.Errorf("%s: %w", n.Log, err)
		}
		for _, e := range ev {
			all = append(all, nodeEvent{n.Name, e})
		}
	}
	return spansOf(all), nil
}

// spansOf pairs, per job attempt and node in time order, each helper
// start with the earliest trigger (launcher begin, exec received) before
// it not yet paired.
func spansOf(all []nodeEvent) helperSpans {
	type key struct {
		node    string
		job     uint64
		attempt int
	}
	by := map[key][]launchtrace.Event{}
	for _, x := range all {
		k := key{x.node, x.e.Job, x.e.Attempt}
		by[k] = append(by[k], x.e)
	}
	var s helperSpans
	for _, ev := range by {
		slices.SortStableFunc(ev, func(a, b launchtrace.Event) int { return a.At.Compare(b.At) })
		var waiting []launchtrace.Event
		for _, e := range ev {
			switch e.Stage {
			case launchtrace.LauncherBegin, launchtrace.ExecReceived:
				waiting = append(waiting, e)
			case launchtrace.HelperStarted:
				if len(waiting) == 0 {
					continue
				}
				t := waiting[0]
				waiting = waiting[1:]
				if t.Stage == launchtrace.LauncherBegin {
					s.launcher = append(s.launcher, e.At.Sub(t.At))
				} else {
					s.exec = append(s.exec, e.At.Sub(t.At))
				}
			}
		}
	}
	return s
}

func (s helperSpans) print(w io.Writer) {
	printSpans(w, "a job process due → its helper has executed it, per process, on its node", "none",
		spanRow{"head begins the launcher → the launcher's helper", s.launcher},
		spanRow{"remote exec received → its helper", s.exec})
}
