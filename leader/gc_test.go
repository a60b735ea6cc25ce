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
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: 1, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", NP: 1}}})
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

// A purged job leaves a history record; the leader purges the records
// older than the history retention, and none when it is off.
func TestCollectJobs_History(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1")
	w.cfg.JobRetention = time.Hour
	zero := 0
	submit(w, "done", raftfsm.JobSpec{NP: 1, MPI: "none"})
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: 1, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", NP: 1}}})
	w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: 1, Attempt: 1, Node: "n1"})
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
	w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: 1, Attempt: 1, ExitCode: &zero})
	ended := w.now
	w.now = ended.Add(2 * time.Hour)
	cmds, _ := CollectJobs(w.view(), GCBook{})
	wantCommands(t, cmds, []string{`purge_jobs {"ids":[1]}`})
	w.apply(cmds[0].Type, cmds[0].Body)
	if len(w.st.History) != 1 || w.st.History[0].ID != 1 {
		t.Fatalf("history after the purge: %+v", w.st.History)
	}
	for _, tc := range []struct {
		name      string
		retention time.Duration
		after     time.Duration
		want      []string
	}{
		{name: "history retention off: kept", after: 1000 * time.Hour},
		{name: "within the history retention: kept", retention: 24 * time.Hour, after: 24 * time.Hour},
		{name: "past the history retention: purged", retention: 24 * time.Hour, after: 24*time.Hour + time.Second,
			want: []string{`purge_history {"before":"2026-01-01T00:00:01Z"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := w.view()
			v.Now = ended.Add(tc.after)
			v.Config.HistoryRetention = tc.retention
			cmds, _ := CollectJobs(v, GCBook{})
			wantCommands(t, cmds, tc.want)
		})
	}
}
