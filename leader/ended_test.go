package leader

import (
	"math"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestSnapshot_EndedAttemptsLeaveNoLoadOrTraffic: a 3-rank attempt ran
// five minutes on n1 and n2 and ended 3 s ago. n1's latest sample was
// taken while it ran: its load average and its traffic still show the
// ranks. n2 has sampled twice since: its latest traffic is its own. n3 ran
// nothing: its busy figures are someone else's work and stay.
func TestSnapshot_EndedAttemptsLeaveNoLoadOrTraffic(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2", "n3")
	start, end := t0, t0.Add(5*time.Minute)
	now := end.Add(3 * time.Second)
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	const quiet, busy = 1e6, 10e6 // bytes/s
	for _, name := range []string{"n1", "n2", "n3"} {
		n := w.node(name)
		n.Attrs.Load = nodestate.Means{Now: 3.2, M1: 3.2, M5: 3.2, M15: 2}
		n.Attrs.NetRxBytesPerSec, n.Attrs.NetTxBytesPerSec = busy, busy
		n.Traffic = []nodestate.TrafficPoint{{At: ms(start.Add(-time.Minute)), Rx: quiet, Tx: quiet},
			{At: ms(start.Add(3 * time.Second)), Rx: busy, Tx: busy}, {At: ms(end.Add(-time.Second)), Rx: busy, Tx: busy}}
	}
	n2 := w.node("n2")
	n2.Traffic = append(n2.Traffic, nodestate.TrafficPoint{At: ms(end.Add(time.Second)), Rx: 5e6, Tx: 5e6},
		nodestate.TrafficPoint{At: ms(end.Add(2 * time.Second)), Rx: 2e6, Tx: 3e6})
	n2.Attrs.NetRxBytesPerSec, n2.Attrs.NetTxBytesPerSec = 2e6, 3e6

	id := submit(w, "ranks", raftfsm.JobSpec{NP: 6, MPI: "none"})
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", NP: 3}, {Node: "n2", NP: 3}}})
	for _, n := range []string{"n1", "n2"} {
		w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: n})
	}
	w.now = start
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1})
	w.now = end
	zero := 0
	w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: 1, ExitCode: &zero})
	if a := w.st.Jobs[id].Current(); !a.Ended() || !a.StartedAt.Equal(start) || !a.EndedAt.Equal(end) {
		t.Fatalf("attempt %+v, want it run from %v to %v", a, start, end)
	}

	snap := Snapshot(w.st, w.nodes, now)
	got := map[string]placement.Node{}
	for _, n := range snap.Nodes {
		got[n.Name] = n
	}
	// 3 ranks for 5 minutes: the load average held 3(1-e^-5); 3 s later
	// e^-0.05 of that is left.
	left := 3 * (1 - math.Exp(-5)) * math.Exp(-0.05)
	for _, name := range []string{"n1", "n2"} {
		if l := got[name].Load.Now; math.Abs(l-(3.2-left)) > 1e-9 {
			t.Errorf("%s's latest load %.3f, want %.3f: the ended ranks' share taken out", name, l, 3.2-left)
		}
	}
	if n := got["n1"]; n.NetRxBytesPerSec != quiet || n.NetTxBytesPerSec != quiet {
		t.Errorf("n1's traffic %.0f/%.0f B/s, want %.0f: its latest sample was taken while the ranks talked", n.NetRxBytesPerSec, n.NetTxBytesPerSec, quiet)
	}
	if n := got["n2"]; n.NetRxBytesPerSec != 2e6 || n.NetTxBytesPerSec != 3e6 {
		t.Errorf("n2's traffic %.0f/%.0f B/s, want 2e6/3e6: sampled after the attempt ended, it is the node's own", n.NetRxBytesPerSec, n.NetTxBytesPerSec)
	}
	if n := got["n3"]; n.Load.Now != 3.2 || n.NetRxBytesPerSec != busy {
		t.Errorf("n3 ran no attempt: load %.2f traffic %.0f, want 3.2 and %.0f", n.Load.Now, n.NetRxBytesPerSec, busy)
	}
}

// TestSnapshot_EndedAttemptsByWhatTheyUsed: an attempt that mostly slept
// (its recorded CPU time a tenth of its ranks' cores) leaves a tenth of
// their load, not all of it; and a node where another attempt started
// after the ended one keeps its latest traffic, which is the live one's.
func TestSnapshot_EndedAttemptsByWhatTheyUsed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2")
	start, end := t0, t0.Add(10*time.Minute)
	now := end.Add(time.Second)
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	for _, name := range []string{"n1", "n2"} {
		n := w.node(name)
		n.Attrs.Load = nodestate.Means{Now: 2.5, M1: 2.5, M5: 2.5, M15: 2.5}
		n.Attrs.NetRxBytesPerSec, n.Attrs.NetTxBytesPerSec = 9e6, 9e6
		n.Traffic = []nodestate.TrafficPoint{{At: ms(start.Add(-time.Minute)), Rx: 1e6, Tx: 1e6},
			{At: ms(end.Add(-2 * time.Second)), Rx: 9e6, Tx: 9e6}, {At: ms(end.Add(time.Second)), Rx: 9e6, Tx: 9e6}}
	}
	zero := 0
	sleeper := submit(w, "sleeper", raftfsm.JobSpec{NP: 4, MPI: "none"})
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: sleeper, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", NP: 2}, {Node: "n2", NP: 2}}})
	for _, n := range []string{"n1", "n2"} {
		w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: sleeper, Attempt: 1, Node: n})
	}
	w.now = start
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: sleeper, Attempt: 1})
	// A job on n2 alone starts while the sleeper runs, and is still running.
	w.now = start.Add(5 * time.Minute)
	live := submit(w, "live", raftfsm.JobSpec{NP: 1, MPI: "none"})
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: live, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n2", NP: 1}}})
	w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: live, Attempt: 1, Node: "n2"})
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: live, Attempt: 1})
	w.now = end
	w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: sleeper, Attempt: 1, ExitCode: &zero})
	// 2 ranks x 600 s = 1200 core-seconds possible; 120 used.
	w.do(raftfsm.CmdRecordUsage, raftfsm.RecordUsage{ID: sleeper, Attempt: 1, Usage: raftfsm.NodeUsage{Node: "n1", CPUSeconds: 120, Wall: 10 * time.Minute}})

	got := map[string]placement.Node{}
	for _, n := range Snapshot(w.st, w.nodes, now).Nodes {
		got[n.Name] = n
	}
	left := math.Exp(-1.0/60) * (1 - math.Exp(-10))
	if want := 2.5 - 0.2*left; math.Abs(got["n1"].Load.Now-want) > 1e-9 {
		t.Errorf("n1's latest load %.3f, want %.3f: the sleeper used 0.2 cores there, not 2", got["n1"].Load.Now, want)
	}
	if want := 2.5 - 2*left; math.Abs(got["n2"].Load.Now-want) > 1e-9 {
		t.Errorf("n2's latest load %.3f, want %.3f: no usage recorded yet, its ranks count as busy", got["n2"].Load.Now, want)
	}
	if got["n1"].NetRxBytesPerSec != 1e6 {
		t.Errorf("n1's traffic %.0f, want 1e6: the sleeper's is taken out", got["n1"].NetRxBytesPerSec)
	}
	if got["n2"].NetRxBytesPerSec != 9e6 {
		t.Errorf("n2's traffic %.0f, want 9e6: an attempt started there since and still runs", got["n2"].NetRxBytesPerSec)
	}
}

// TestBusyCores_CountsEachRanksCPUs: two ranks of 4 CPUs each kept up to
// 8 cores busy. Until the node records the attempt's usage, its ghost
// load is all 8; then it is what the ranks used (2 cores' worth over
// the run), never more than 8.
func TestBusyCores_CountsEachRanksCPUs(t *testing.T) {
	t.Parallel()
	h := raftfsm.Host{Node: "n1", NP: 2}
	ran := 5 * time.Minute
	a := &raftfsm.Attempt{}
	if got := busyCores(a, h, 4, ran); got != 8 {
		t.Errorf("no usage recorded: %.1f busy cores, want 8 (2 ranks of 4 CPUs)", got)
	}
	a.Usage = []raftfsm.NodeUsage{{Node: "n1", CPUSeconds: 2 * ran.Seconds()}}
	if got := busyCores(a, h, 4, ran); got != 2 {
		t.Errorf("2 cores' CPU time recorded: %.1f busy cores, want 2", got)
	}
	a.Usage[0].CPUSeconds = 20 * ran.Seconds()
	if got := busyCores(a, h, 4, ran); got != 8 {
		t.Errorf("more CPU time than the ranks' cores: %.1f busy cores, want the 8 they had", got)
	}
}

// TestSnapshot_EndedAttemptsBySampleWindow: a 2-rank attempt moved 10
// MB/s on each of its four nodes for five minutes and ended 0.5 s ago;
// the nodes read 1 MB/s before it. Whether a node's latest traffic is
// the attempt's or its own is told by the window that sample covers:
//   - n1's latest sample, 0.3 s after the end, is an early one a shift
//     called for: its rates cover the 0.2 s watch reading before it, all
//     after the end, and show a flow of 8 MB/s that started as the
//     attempt ended. It is the node's own and stands.
//   - n2's outside flow runs at the attempt's rate, so its traffic
//     history has no new step; its early sample still stands.
//   - n3's latest sample is a regular one, 1 s after the end, covering
//     the 3 s before it: 2 s of the attempt. It reads as before the
//     attempt.
//   - n4 runs an agent that does not say its window: its latest sample,
//     0.3 s after the end, is taken to cover the time since its
//     previous traffic point, while the attempt ran, as before.
func TestSnapshot_EndedAttemptsBySampleWindow(t *testing.T) {
	t.Parallel()
	names := []string{"n1", "n2", "n3", "n4"}
	w := newWorld(t, names...)
	start, end := t0, t0.Add(5*time.Minute)
	now := end.Add(500 * time.Millisecond)
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	const quiet, busy, outside = 1e6, 10e6, 8e6 // bytes/s
	for _, name := range names {
		n := w.node(name)
		n.Traffic = []nodestate.TrafficPoint{{At: ms(start.Add(-time.Minute)), Rx: quiet, Tx: quiet},
			{At: ms(start.Add(3 * time.Second)), Rx: busy, Tx: busy}}
		n.Attrs.NetRxBytesPerSec, n.Attrs.NetTxBytesPerSec = busy, busy
	}
	early := end.Add(300 * time.Millisecond)
	n1 := w.node("n1")
	n1.Traffic = append(n1.Traffic, nodestate.TrafficPoint{At: ms(early), Rx: outside, Tx: outside})
	n1.Attrs.NetRxBytesPerSec, n1.Attrs.NetTxBytesPerSec, n1.SampledAt, n1.NetWindowMs = outside, outside, ms(early), 200
	n2 := w.node("n2")
	n2.SampledAt, n2.NetWindowMs = ms(early), 200
	n3 := w.node("n3")
	n3.SampledAt, n3.NetWindowMs = ms(end.Add(time.Second)), 3000
	n4 := w.node("n4")
	n4.Traffic = append(n4.Traffic, nodestate.TrafficPoint{At: ms(early), Rx: outside, Tx: outside})
	n4.Attrs.NetRxBytesPerSec, n4.Attrs.NetTxBytesPerSec, n4.SampledAt = outside, outside, ms(early)

	id := submit(w, "ranks", raftfsm.JobSpec{NP: 8, MPI: "none"})
	var hosts []raftfsm.Host
	for _, name := range names {
		hosts = append(hosts, raftfsm.Host{Node: name, NP: 2})
	}
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: hosts})
	for _, name := range names {
		w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: name})
	}
	w.now = start
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1})
	w.now = end
	zero := 0
	w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: 1, ExitCode: &zero})

	got := map[string]placement.Node{}
	for _, n := range Snapshot(w.st, w.nodes, now).Nodes {
		got[n.Name] = n
	}
	for _, tc := range []struct {
		name, why string
		want      float64
	}{
		{"n1", "an early sample after the end shows the node's own flow", outside},
		{"n2", "an early sample after the end shows the node's own flow, at the attempt's rate", busy},
		{"n3", "a 3 s sample whose window overlapped the attempt reads as before it", quiet},
		{"n4", "an agent without windows: the sample is taken to cover the time since the previous point", quiet},
	} {
		if n := got[tc.name]; n.NetRxBytesPerSec != tc.want || n.NetTxBytesPerSec != tc.want {
			t.Errorf("%s's traffic %.0f/%.0f B/s, want %.0f: %s", tc.name, n.NetRxBytesPerSec, n.NetTxBytesPerSec, tc.want, tc.why)
		}
	}
}
