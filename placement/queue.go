package placement

import (
	"cmp"
	"slices"
	"strings"
)

// hpeSkipLimit is how many CPU jobs an accelerator node looks past for a job
// that needs its accelerator (seed 001 §III-C): enough to keep GPUs busy with
// GPU work, few enough that CPU jobs never starve.
const hpeSkipLimit = 3

// NextJob picks the job to start on a node that has just freed up: queue order
// is priority (higher first), then FCFS (lower Seq, then lower ID), with seed
// 001's HPE rule. A job that needs a PE kind the node lacks is passed over. On a
// node with an accelerator (any PE kind but "cpu"), a job needing none of it is
// passed over too, up to hpeSkipLimit of them, to find a job that needs one; if
// none turns up, the first CPU job passed over runs. idx indexes queue; ok is
// false when nothing in the queue can run on the node.
func NextJob(queue []QueuedJob, freed Node) (idx int, ok bool) {
	if !freed.Alive {
		return 0, false
	}
	order := make([]int, len(queue))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := &queue[a], &queue[b]
		if c := cmp.Compare(y.Priority, x.Priority); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Seq, y.Seq); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	accel := false
	for _, p := range freed.PEs {
		if p.Count > 0 && !strings.EqualFold(p.Kind, "cpu") {
			accel = true
		}
	}
	firstCPU, skipped := -1, 0
	for _, i := range order {
		need := strings.ToLower(strings.TrimSpace(queue[i].NeedsPE))
		switch {
		case need != "" && need != "cpu":
			if peCount(&freed, need) > 0 {
				return i, true
			}
			// the node cannot run it; not a skip that delays anyone
		case !accel:
			return i, true
		default:
			if firstCPU < 0 {
				firstCPU = i
			}
			skipped++
			if skipped > hpeSkipLimit {
				return firstCPU, true
			}
		}
	}
	if firstCPU >= 0 {
		return firstCPU, true
	}
	return 0, false
}
