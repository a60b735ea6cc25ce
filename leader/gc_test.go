package leader

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestCollectJobs(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1")
	zero := 0
	submit(w, "done", raftfsm.JobSpec{NP: 1, MPI: "none"})
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: 1, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", Procs: 1}}})
	w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: 1, Attempt: 1, Node: "n1"})
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
	w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: 1, Attempt: 1, ExitCode: &zero})
	submit(w, "queued", raftfsm.JobSpec{NP: 1, MPI: "none"}) // never finishes: never purged
	ended := w.now

	for _, tc := range []struct {
		name      string
		retention time.Duration
		after     time.Duration
		last      time.Time
		want      string // the body of purge_jobs, "" for none
		collected bool   // the book records this round as a collection
	}{
		{name: "retention off", retention: 0, after: 48 * time.Hour},
		{name: "within retention", retention: time.Hour, after: 59 * time.Minute, collected: true},
		{name: "past retention", retention: time.Hour, after: time.Hour + time.Second, want: `{"ids":[1]}`, collected: true},
		{name: "looked less than a minute ago", retention: time.Hour, after: 2 * time.Hour, last: ended.Add(2*time.Hour - 30*time.Second)},
		{name: "short retention looks as often", retention: time.Second, after: 2 * time.Second, last: ended.Add(time.Second), want: `{"ids":[1]}`, collected: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := w.view()
			v.Now = ended.Add(tc.after)
			v.Config.JobRetention = tc.retention
			cmds, next := CollectJobs(v, GCBook{LastCollect: tc.last})
			got := ""
			if len(cmds) == 1 && cmds[0].Type == raftfsm.CmdPurgeJobs {
				got = js(cmds[0].Body)
			} else if len(cmds) > 0 {
				t.Fatalf("commands %q", commands(cmds))
			}
			if got != tc.want {
				t.Errorf("purge %q, want %q", got, tc.want)
			}
			if c := next.LastCollect.Equal(v.Now); c != tc.collected {
				t.Errorf("book LastCollect %v (now %v), want recorded = %v", next.LastCollect, v.Now, tc.collected)
			}
		})
	}
}
