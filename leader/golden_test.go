package leader

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// rewrite is datadriven's -rewrite flag, which rewrites the scenarios'
// expected output; the golden history is rewritten with them.
func rewrite() bool { return flag.Lookup("rewrite").Value.(flag.Getter).Get().(bool) }

// TestGolden_History replays a scripted history of a four-node cluster
// (jobs submitted, a node that never reserves, a node dying under a job,
// a probe crashing, an elastic job reporting progress, a placement raft
// refuses, finished jobs aging out) through the whole leader, round
// after round, and compares everything it decided with
// testdata/history.golden. Regenerate with:
// go test ./leader -run Golden -rewrite
func TestGolden_History(t *testing.T) {
	t.Parallel()
	w := scriptedHistory(t)
	path := filepath.Join("testdata", "history.golden")
	if rewrite() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, w.out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if !bytes.Equal(w.out.Bytes(), want) {
		t.Fatalf("history differs from %s (run with -rewrite if the change is intended):\n%s", path, w.out.Bytes())
	}
}

func scriptedHistory(t testing.TB) *world {
	w := newWorld(t, "n1", "n2", "n3", "n4")
	w.cfg.Probes.RoundLen = 20 * time.Second
	w.cfg.RefusePlacement = func(j *raftfsm.Job) bool { return len(j.Spec.Cmd) > 1 && j.Spec.Cmd[1] == "refuse-me" }
	step := func(d time.Duration, hung ...string) {
		w.advance(d)
		w.round()
		w.nodesAct(hung...)
	}

	w.logf("# n1 leads alone: the others join raft, the first bandwidth cycle is planned")
	step(0)
	step(time.Second)

	w.logf("# three jobs: one fits, one needs n4 which never reserves, one immediate job too big")
	submit(w, "fits", raftfsm.JobSpec{NP: 6, PPN: 2, MPI: "none"})
	submit(w, "wide", raftfsm.JobSpec{NP: 8, PPN: 2, MPI: "none"})
	submit(w, "now", raftfsm.JobSpec{NP: 64, Immediate: true, MPI: "none"})
	step(time.Second, "n4")
	step(time.Second, "n4")
	w.logf("# past the co-allocation timeout: the wide job is requeued off n4")
	step(11*time.Second, "n4")
	step(time.Second)
	step(time.Second)

	w.logf("# n3 dies under the running job: it is requeued off n3; the bandwidth cycle drops n3")
	w.setStatus("n3", StatusDead)
	step(time.Second)
	step(time.Second)
	w.logf("# past the dead-voter grace (autopilot removes n3 from raft)")
	step(10 * time.Second)

	w.logf("# n2's latency probe crashes, then hangs after its relaunch")
	for i := range w.node("n2").Probes {
		if b := &w.node("n2").Probes[i]; b.Kind == raftfsm.ProbeLatency {
			b.State = probeplan.StateExited
		}
	}
	step(time.Second)
	w.frozen = map[string]bool{"n2/" + raftfsm.ProbeLatency: true}
	step(10 * time.Second)
	step(16 * time.Second)
	w.frozen = nil
	step(time.Second)

	w.logf("# the jobs end; an elastic job and a job raft refuses arrive")
	zero := 0
	for _, id := range w.st.SortedJobIDs() {
		j := w.st.Jobs[id]
		if att := j.Current(); j.State == raftfsm.StateRunning {
			w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: att.N, ExitCode: &zero})
		}
	}
	el := submit(w, "jacobi", raftfsm.JobSpec{NP: 1, PPN: 1, MPI: "none",
		Elastic: &raftfsm.ElasticSpec{MinNP: 1, MaxNP: 3, Deadline: 120 * time.Second, Iterations: 1000}})
	submit(w, "bad", raftfsm.JobSpec{Cmd: []string{"./bad", "refuse-me"}, NP: 1, MPI: "none"})
	step(time.Second)
	step(time.Second)
	step(time.Second)

	w.logf("# the elastic job reports slow progress: it must grow to meet its deadline")
	for _, it := range []int64{1, 5, 10} {
		w.advance(3 * time.Second)
		w.do(raftfsm.CmdReportProgress, raftfsm.ReportProgress{ID: el, Attempt: w.st.Jobs[el].Attempt, Iter: it})
	}
	step(time.Second)

	w.logf("# an hour later the finished jobs are purged; a new full bandwidth cycle starts")
	step(time.Hour)
	step(time.Second)

	w.logf("# a job pinned to n2 runs; n2 is drained with a deadline: a new job goes elsewhere,")
	w.logf("# and past the deadline the pinned job is requeued and waits for n2; undrained, it runs again")
	submit(w, "pinned", raftfsm.JobSpec{NP: 1, MPI: "none", Relax: "none", Hostfile: []raftfsm.HostSlots{{Host: "n2", Slots: 1}}, MaxAttempts: 2})
	step(time.Second)
	step(time.Second)
	w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2", Deadline: 5 * time.Second})
	submit(w, "after-drain", raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none"})
	step(time.Second)
	step(time.Second)
	step(5 * time.Second)
	step(time.Second)
	w.do(raftfsm.CmdUndrainNode, raftfsm.UndrainNode{Node: "n2"})
	step(time.Second)
	step(time.Second)

	w.logf("# bandwidth rows arrive: n1-n2 at 940 Mbit/s, n4 at 300 behind its uplink;")
	w.logf("# the leader records the switches it infers, once")
	at := w.now.UnixMilli()
	w.node("n1").Net = []NetEntry{{Peer: "n2", BW: 940, Peak: 940, BWAt: at}, {Peer: "n4", BW: 300, Peak: 300, BWAt: at}}
	w.node("n2").Net = []NetEntry{{Peer: "n4", BW: 290, Peak: 290, BWAt: at}}
	step(time.Second)
	step(time.Second)
	return w
}

// The history scenario traces what the scripted history does: every
// line of the golden but its narration, which the scenario file holds
// as comments.
func TestGolden_HistoryScenarioMatches(t *testing.T) {
	t.Parallel()
	w := runScenario(t, filepath.Join("testdata", "scenarios", "history.txt"))
	want, err := os.ReadFile(filepath.Join("testdata", "history.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var decisions []byte
	for _, l := range bytes.SplitAfter(want, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("# ")) {
			decisions = append(decisions, l...)
		}
	}
	if !bytes.Equal(w.out.Bytes(), decisions) {
		t.Fatalf("the history scenario traced:\n%s\nwant:\n%s", w.out.Bytes(), decisions)
	}
}
