package leader

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// running is a world with elastic job 1 running on the first np of four
// nodes since t0, reporting iters (one report every 3s).
func running(t *testing.T, np int, sp raftfsm.ElasticSpec, iters ...int64) *world {
	w := newWorld(t, "n1", "n2", "n3", "n4")
	submit(w, "el", raftfsm.JobSpec{NP: np, PPN: 1, MPI: "none", Elastic: &sp})
	hosts := []string{"n1", "n2", "n3", "n4"}[:np]
	placeAndAck(w, 1, hosts, hosts...)
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
	for _, it := range iters {
		w.now = w.now.Add(3 * time.Second)
		w.do(raftfsm.CmdReportProgress, raftfsm.ReportProgress{ID: 1, Attempt: 1, Iter: it})
	}
	return w
}

func TestSchedule_Elastic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		world func(t *testing.T) *world
		want  string // the resize_job body's start, "" for none
	}{
		{name: "behind its deadline: grown", world: func(t *testing.T) *world {
			return running(t, 1, raftfsm.ElasticSpec{MinNP: 1, MaxNP: 3, Deadline: 2 * time.Minute, Iterations: 1000}, 1, 5, 10)
		}, want: `{"id":1,"attempt":1,"target_np":3,"reason":"deadline`},
		{name: "far ahead of its deadline: shrunk", world: func(t *testing.T) *world {
			return running(t, 3, raftfsm.ElasticSpec{MinNP: 1, MaxNP: 3, Deadline: time.Hour, Iterations: 1000}, 1, 5, 10)
		}, want: `{"id":1,"attempt":1,"target_np":1,"reason":"deadline: 1 nodes still finish`},
		{name: "over its budget at every count: left on the cheapest", world: func(t *testing.T) *world {
			return running(t, 3, raftfsm.ElasticSpec{MinNP: 1, MaxNP: 3, BudgetNH: 0.004, Iterations: 120}, 1, 5, 10)
		}},
		{name: "no progress reported: left alone", world: func(t *testing.T) *world {
			return running(t, 1, raftfsm.ElasticSpec{MinNP: 1, MaxNP: 3, Deadline: 2 * time.Minute, Iterations: 1000})
		}},
		{name: "already asked to resize: not asked again", world: func(t *testing.T) *world {
			w := running(t, 1, raftfsm.ElasticSpec{MinNP: 1, MaxNP: 3, Deadline: 2 * time.Minute, Iterations: 1000}, 1, 5, 10)
			w.do(raftfsm.CmdResizeJob, raftfsm.ResizeJob{ID: 1, Attempt: 1, TargetNP: 3, Reason: "grown"})
			w.now = w.now.Add(time.Minute) // past MinInterval: only the resize in flight holds it back
			return w
		}},
		{name: "on track: left alone", world: func(t *testing.T) *world {
			return running(t, 2, raftfsm.ElasticSpec{MinNP: 1, MaxNP: 3, Deadline: time.Hour, Iterations: 30}, 5, 10, 15)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := tc.world(t)
			w.now = w.now.Add(time.Second)
			cmds, _ := Schedule(w.view(), JobsBook{})
			var got []string
			for _, c := range cmds {
				if c.Type == raftfsm.CmdResizeJob {
					got = append(got, js(c.Body))
					if c.Before == nil || c.Before.Msg != "resizing elastic job" || c.Placement {
						t.Errorf("resize without its log line, or marked as a placement: %+v", c)
					}
				}
			}
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("resized: %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
				t.Fatalf("resize %q, want one like %s", got, tc.want)
			}
		})
	}
}
