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

// arrayStageRows are the stages of an array task in the order a task
// passes them. A task of one copy runs on one node, so first and last
// differ only for the steps every node of an allocation takes.
var arrayStageRows = []struct {
	label string
	stage launchtrace.Stage
}{
	{"leader's round begins", launchtrace.RoundStart},
	{"placement decided", launchtrace.Placed},
	{"place_job committed", launchtrace.PlaceCommitted},
	{"host applied place_job", launchtrace.PlacementSeen},
	{"host's ack committed", launchtrace.AckCommitted},
	{"start_job committed", launchtrace.StartCommitted},
	{"head begins the launcher", launchtrace.LauncherBegin},
	{"cgroup created", launchtrace.CgroupReady},
	{"helper started", launchtrace.HelperStarted},
	{"launcher exited", launchtrace.Exited},
	{"finish_attempt committed", launchtrace.OutcomeCommitted},
	{"cgroup removed", launchtrace.CgroupRemoved},
}

// printArrayStages writes where an array's tasks spent their time, from the
// agents' launch stage lines of the jobs first..first+tasks-1:
//
//   - progress: when the first task, half of them and the last reached each
//     stage, since the submit: the stage where the curve stretches is the
//     one that holds the array up;
//   - steps: each task's time from one stage to the next, median and p90;
//   - rounds: how many scheduling rounds placed the array, and how many
//     tasks a round placed;
//   - concurrency: the most tasks a node had between its launcher's begin
//     and its exit at once.
func printArrayStages(w io.Writer, p *testcluster.ProcCluster, first uint64, tasks int, start time.Time) error {
	in := func(id uint64) bool { return id >= first && id < first+uint64(tasks) }
	var all []launchtrace.Event
	perNode := map[string][]launchtrace.Event{}
	for _, n := range p.Nodes {
		f, err := os.Open(n.Log)
		if err != nil {
			return fmt.Errorf("agent log: %w", err)
		}
		ev, err := launchtrace.Parse(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Log, err)
		}
		ev = slices.DeleteFunc(ev, func(e launchtrace.Event) bool { return !in(e.Job) })
		perNode[n.Name] = ev
		all = append(all, ev...)
	}
	byJob := launchtrace.ByJob(all)
	if len(byJob) == 0 {
		fmt.Fprintln(w, "\nno launch stage lines for the array's tasks: is the agent built with launch stages?")
		return nil
	}
	var prog, steps [][]string
	for i, row := range arrayStageRows {
		var at, step []time.Duration
		for _, s := range byJob {
			t, ok := s.Last[row.stage]
			if !ok {
				continue
			}
			at = append(at, t.Sub(start))
			if i == 0 {
				continue
			}
			// The step from the nearest earlier stage the task has.
			for j := i - 1; j >= 0; j-- {
				if prev, ok := s.Last[arrayStageRows[j].stage]; ok {
					step = append(step, t.Sub(prev))
					break
				}
			}
		}
		if len(at) == 0 {
			continue
		}
		slices.Sort(at)
		prog = append(prog, []string{row.label, fmt.Sprint(len(at)), sec(at[0]), sec(at[len(at)/2]), sec(at[len(at)-1])})
		if len(step) > 0 {
			steps = append(steps, []string{row.label, fmt.Sprintf("%.1f ms", msf(median(step))), fmt.Sprintf("%.1f ms", msf(pct(step, 0.9)))})
		}
	}
	fmt.Fprintf(w, "\nprogress: time since the submit at which tasks reached each stage\n")
	table(w, "stage,tasks,first,half,last", prog)
	fmt.Fprintf(w, "\nsteps: a task's time from the stage before (median, p90 over the tasks)\n")
	table(w, "stage,median,p90", steps)
	rounds := map[time.Time]int{}
	for _, s := range byJob {
		if t, ok := s.First[launchtrace.RoundStart]; ok {
			rounds[t]++
		}
	}
	var per []time.Duration // tasks per round, as durations for median and pct
	for _, n := range rounds {
		per = append(per, time.Duration(n))
	}
	if len(per) > 0 {
		fmt.Fprintf(w, "\nrounds that placed the array: %d; tasks a round placed: median %d, max %d\n",
			len(rounds), median(per), pct(per, 1))
	}
	var rows [][]string
	for _, n := range p.Nodes {
		begun, exited := 0, 0
		peak := 0
		evs := slices.Clone(perNode[n.Name])
		slices.SortStableFunc(evs, func(a, b launchtrace.Event) int { return a.At.Compare(b.At) })
		live := 0
		for _, e := range evs {
			switch e.Stage {
			case launchtrace.LauncherBegin:
				begun++
				live++
				peak = max(peak, live)
			case launchtrace.Exited:
				exited++
				live--
			}
		}
		rows = append(rows, []string{n.Name, fmt.Sprint(begun), fmt.Sprint(exited), fmt.Sprint(peak)})
	}
	fmt.Fprintf(w, "\nper node: tasks headed, and the most running at once (launcher begun, not exited)\n")
	table(w, "node,begun,exited,most at once", rows)
	return nil
}

func sec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
