package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// runLine is one run's progress line (caseRun.runOne): after a change
// its phase says on which side of the first re-test it was placed, and
// a successful run's times are followed by its TCP counters.
var runLine = regexp.MustCompile(`\] (\S+) (cold|steady) (\d+)/\d+ phase (\d+)(?: \((before|after|unknown) re-test\))? (\S+)\s+(\S+)\s+on (\S+)\s+-> (?:([0-9.]+)s \(comm ([0-9.]+)s\)(?: tcp .*)?|FAILED: (.*))$`)

// recsFromLog rebuilds the runs of a progress log (stderr of a run that
// was cut short before it wrote its CSV): what each line says, and the
// group's figures under the case's configured rates of the line's phase.
// Alloc's T, wall, alloc and placement times are not in the log and
// stay 0.
func recsFromLog(c config, path string) ([]runRec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	topos := map[string]netns.Topology{}
	order := map[string]int{}
	var recs []runRec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := runLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		topo, ok := topos[m[1]]
		if !ok {
			if topo, err = netns.LoadTopology(c.caseFile(m[1])); err != nil {
				return nil, err
			}
			topos[m[1]] = topo
		}
		rep, _ := strconv.Atoi(m[3])
		phase, _ := strconv.Atoi(m[4])
		r := runRec{Rep: rep, Policy: m[6], App: m[7], Hosts: strings.Split(m[8], ","), Case: m[1], Kind: m[2], Phase: phase, Err: m[11]}
		if m[5] == retestBefore || m[5] == retestAfter {
			r.Retest = m[5]
		}
		key := fmt.Sprint(r.Case, r.Kind, r.Rep)
		order[key]++
		r.Order = order[key]
		if r.Err == "" {
			r.TimeS, _ = strconv.ParseFloat(m[9], 64)
			r.CommS, _ = strconv.ParseFloat(m[10], 64)
		}
		r.MinAvailMbps, r.Switches, r.Hogs = newModelAt(topo, phase).groupStats(r.Hosts)
		recs = append(recs, r)
	}
	return recs, sc.Err()
}
