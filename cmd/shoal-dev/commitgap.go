package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/testcluster"
)

// commitGaps is, per job, the time from the leader's start_job commit to
// the head beginning the launcher, split by whether the head was the
// leader. A follower learns that an entry committed only from the
// leader's next AppendEntries, which, when no other entry follows, comes
// after raft's CommitTimeout (randomised up to twice it): the follower
// heads' gap minus the leader heads' is what that wait costs a launch.
type commitGaps struct{ follower, leader []time.Duration }

// readCommitGaps reads the stage lines of each agent's log, keeping which
// agent logged them: start_job's commit is logged by the leader, the
// launcher's begin by the head.
func readCommitGaps(p *testcluster.ProcCluster) (commitGaps, error) {
	committed, begun := map[uint64]stageAt{}, map[uint64]stageAt{}
	for _, n := range p.Nodes {
		f, err := os.Open(n.Log)
		if err != nil {
			return commitGaps{}, fmt.Errorf("agent log: %w", err)
		}
		ev, err := launchtrace.Parse(f)
		f.Close()
		if err != nil {
			return commitGaps{}, fmt.Errorf("%s: %w", n.Log, err)
		}
		for _, e := range ev {
			switch e.Stage {
			case launchtrace.StartCommitted:
				committed[e.Job] = stageAt{n.Name, e.At}
			case launchtrace.LauncherBegin:
				begun[e.Job] = stageAt{n.Name, e.At}
			}
		}
	}
	return gapsOf(committed, begun), nil
}

// stageAt is when one agent logged a stage.
type stageAt struct {
	node string
	t    time.Time
}

// gapsOf pairs each job's start_job commit with its launcher's begin.
func gapsOf(committed, begun map[uint64]stageAt) commitGaps {
	var g commitGaps
	for job, c := range committed {
		b, ok := begun[job]
		if !ok {
			continue
		}
		if b.node == c.node {
			g.leader = append(g.leader, b.t.Sub(c.t))
		} else {
			g.follower = append(g.follower, b.t.Sub(c.t))
		}
	}
	return g
}

func (g commitGaps) print(w io.Writer) {
	printSpans(w, "start_job committed → head begins the launcher, per job", "no job",
		spanRow{"head a follower", g.follower}, spanRow{"head the leader", g.leader})
}

// spanRow is one line of printSpans: a label and the spans it sums up.
type spanRow struct {
	what string
	ds   []time.Duration
}

// printSpans prints a titled block of rows, each its spans' median and
// p90 in ms and their count, or none when a row has no span.
func printSpans(w io.Writer, title, none string, rows ...spanRow) {
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, r := range rows {
		if len(r.ds) == 0 {
			fmt.Fprintf(w, "  %s: %s\n", r.what, none)
			continue
		}
		fmt.Fprintf(w, "  %s: median %.1f ms, p90 %.1f ms of %d\n", r.what, msf(median(r.ds)), msf(pct(r.ds, 0.9)), len(r.ds))
	}
}
