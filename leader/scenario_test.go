package leader

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestScenarios replays every testdata/scenarios/*.txt through the whole
// leader, in the manner of etcd raft's interaction tests: each command of
// the file acts on a world (world_test.go) and is followed by what it
// caused, the leader's decisions included, as the world traces them. The
// language is in testdata/scenarios/README.md. Regenerate the expected
// output with:
// go test ./leader -run Scenarios -rewrite
func TestScenarios(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios under testdata/scenarios: the test would pass vacuously")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			runScenario(t, f)
		})
	}
}

// runScenario runs the scenario file at path.
func runScenario(t *testing.T, path string) {
	s := &scenario{}
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		return s.run(t, d)
	})
}

// scenario is the state of one scenario file: its world and the nodes
// that hold back their reservations.
type scenario struct {
	w    *world
	hung []string
}

// run carries out one command and returns what the world traced while
// it ran.
func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	t.Helper()
	if d.Cmd == "nodes" {
		if s.w != nil {
			t.Fatalf("%s: nodes names the cluster once, at the top of the file", d.Pos)
		}
		s.w = newWorld(t, s.positional(t, d, 1)...)
		return ""
	}
	if s.w == nil {
		t.Fatalf("%s: %s before nodes: start the file with \"nodes n1 n2 ...\"", d.Pos, d.Cmd)
	}
	w := s.w
	mark := w.out.Len()
	switch d.Cmd {
	case "config":
		s.config(t, d)
	case "advance":
		w.advance(s.duration(t, d, s.positional(t, d, 1)[0]))
	case "round":
		w.round()
	case "nodes-act":
		w.nodesAct(s.hung...)
	case "step":
		w.advance(s.duration(t, d, s.positional(t, d, 1)[0]))
		w.round()
		w.nodesAct(s.hung...)
	case "hung":
		s.hung = s.positional(t, d, 0)
	case "submit":
		s.submit(t, d)
	case "node-dies":
		w.setStatus(s.positional(t, d, 1)[0], nodestate.StatusDead)
	case "node-status":
		args := s.positional(t, d, 2)
		w.setStatus(args[0], nodestate.Status(args[1]))
	case "probe-crash", "probe-hang", "probe-unhang":
		s.probe(t, d)
	case "finish-running":
		for _, id := range w.st.SortedJobIDs() {
			if j := w.st.Jobs[id]; j.State == raftfsm.StateRunning {
				s.finish(t, d, j)
			}
		}
	case "finish":
		s.finish(t, d, s.job(t, d))
	case "fail":
		j := s.job(t, d)
		f := raftfsm.FailAttempt{ID: j.ID, Attempt: j.Attempt, Reason: s.str(t, d, "reason", "failed"), Retry: d.HasArg("retry")}
		if a, ok := d.Arg("lost"); ok {
			f.Lost = a.Vals
		}
		w.do(raftfsm.CmdFailAttempt, f)
	case "progress":
		j := s.job(t, d)
		w.do(raftfsm.CmdReportProgress, raftfsm.ReportProgress{ID: j.ID, Attempt: j.Attempt, Iter: int64(s.num(t, d, "iter", 0))})
	case "drain":
		w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: s.positional(t, d, 1)[0], Deadline: s.dur(t, d, "deadline", 0)})
	case "undrain":
		w.do(raftfsm.CmdUndrainNode, raftfsm.UndrainNode{Node: s.positional(t, d, 1)[0]})
	case "net":
		s.net(t, d)
	case "link":
		args := s.positional(t, d, 2)
		if args[1] == "none" {
			w.node(args[0]).Link = probeplan.LinkVerdict{}
			break
		}
		since := w.now.Add(-s.dur(t, d, "ago", 0))
		w.node(args[0]).Link = probeplan.LinkVerdict{Change: probeplan.LinkChange(args[1]), Mbps: s.float(t, d, "mbps", 0), Since: since, At: w.now}
	case "heard":
		if w.heard == nil {
			w.heard = map[string]Renewal{}
		}
		w.heard[s.positional(t, d, 1)[0]] = Renewal{At: w.now.Add(-s.dur(t, d, "ago", 0)),
			Lease: s.dur(t, d, "lease", 0), Applied: uint64(s.num(t, d, "applied", 0))}
	case "leading":
		w.leadingSince = w.now.Add(-s.dur(t, d, "ago", 0))
	case "raft":
		s.raft(t, d)
	case "jobs":
		s.jobs()
	default:
		t.Fatalf("%s: unknown command %q: see testdata/scenarios/README.md for the language", d.Pos, d.Cmd)
	}
	return w.out.String()[mark:]
}

// positional returns the command's arguments that have no value, and
// stops the test when there are fewer than least.
func (s *scenario) positional(t *testing.T, d *datadriven.TestData, least int) []string {
	t.Helper()
	var out []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			out = append(out, a.Key)
		}
	}
	if len(out) < least {
		t.Fatalf("%s: %s wants %d plain argument(s), got %q", d.Pos, d.Cmd, least, out)
	}
	return out
}

func (s *scenario) str(t *testing.T, d *datadriven.TestData, key, def string) string {
	t.Helper()
	if a, ok := d.Arg(key); ok {
		return strings.Join(a.Vals, ", ")
	}
	return def
}

func (s *scenario) num(t *testing.T, d *datadriven.TestData, key string, def int) int {
	t.Helper()
	v := s.str(t, d, key, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %s=%q: want a whole number", d.Pos, key, v)
	}
	return n
}

func (s *scenario) float(t *testing.T, d *datadriven.TestData, key string, def float64) float64 {
	t.Helper()
	v := s.str(t, d, key, "")
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s: %s=%q: want a number", d.Pos, key, v)
	}
	return f
}

func (s *scenario) dur(t *testing.T, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	t.Helper()
	v := s.str(t, d, key, "")
	if v == "" {
		return def
	}
	return s.duration(t, d, v)
}

func (s *scenario) duration(t *testing.T, d *datadriven.TestData, v string) time.Duration {
	t.Helper()
	dd, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %q is not a duration: write it as 1s, 500ms or 1h", d.Pos, v)
	}
	return dd
}

// job is the job the command's first plain argument names: its number,
// or the request name it was submitted under.
func (s *scenario) job(t *testing.T, d *datadriven.TestData) *raftfsm.Job {
	t.Helper()
	ref := s.positional(t, d, 1)[0]
	if id, err := strconv.ParseUint(ref, 10, 64); err == nil {
		if j := s.w.st.Jobs[id]; j != nil {
			return j
		}
	}
	for _, id := range s.w.st.SortedJobIDs() {
		if j := s.w.st.Jobs[id]; j.RequestID == ref {
			return j
		}
	}
	t.Fatalf("%s: no job %q: name one by its number or its submit name", d.Pos, ref)
	return nil
}

// config sets the leader's configuration, key=value.
func (s *scenario) config(t *testing.T, d *datadriven.TestData) {
	t.Helper()
	c := &s.w.cfg
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "round-len":
			c.Probes.RoundLen = s.dur(t, d, a.Key, 0)
		case "bandwidth-interval":
			c.Probes.BandwidthInterval = s.dur(t, d, a.Key, 0)
		case "coalloc-timeout":
			c.CoallocTimeout = s.dur(t, d, a.Key, 0)
		case "job-retention":
			c.JobRetention = s.dur(t, d, a.Key, 0)
		case "fair-share-half-life":
			c.FairShareHalfLife = s.dur(t, d, a.Key, 0)
		case "voters":
			c.Voters = s.num(t, d, a.Key, 0)
		case "fence-lease":
			c.Fence.Lease = s.dur(t, d, a.Key, 0)
		case "fence-clock-rate":
			c.Fence.ClockRate = s.float(t, d, a.Key, 0)
		case "fence-slack":
			c.Fence.Slack = s.dur(t, d, a.Key, 0)
		case "refuse-placement":
			// Raft refuses the placement of a job whose command line has
			// this word among its arguments: a placement refused for its
			// content, which the next round rejects.
			word := s.str(t, d, a.Key, "")
			c.RefusePlacement = func(j *raftfsm.Job) bool { return len(j.Spec.Cmd) > 1 && slices.Contains(j.Spec.Cmd[1:], word) }
		default:
			t.Fatalf("%s: unknown config key %q: see testdata/scenarios/README.md", d.Pos, a.Key)
		}
	}
}

// submit submits a job as a user would.
func (s *scenario) submit(t *testing.T, d *datadriven.TestData) {
	t.Helper()
	name := s.positional(t, d, 1)[0]
	sp := raftfsm.JobSpec{Cmd: []string{"./" + name}, NP: s.num(t, d, "np", 1), PPN: s.num(t, d, "ppn", 0),
		MPI: s.str(t, d, "mpi", "none"), Relax: s.str(t, d, "relax", ""), MaxAttempts: s.num(t, d, "max-attempts", 0),
		Immediate: d.HasArg("immediate"), Oversubscribe: d.HasArg("oversubscribe"), Force: d.HasArg("force")}
	if a, ok := d.Arg("cmd"); ok {
		sp.Cmd = a.Vals
	}
	if a, ok := d.Arg("hostfile"); ok {
		for _, v := range a.Vals {
			host, slots, _ := strings.Cut(v, ":")
			n, err := strconv.Atoi(slots)
			if err != nil {
				t.Fatalf("%s: hostfile entry %q: want host:slots", d.Pos, v)
			}
			sp.Hostfile = append(sp.Hostfile, raftfsm.HostSlots{Host: host, Slots: n})
		}
	}
	if a, ok := d.Arg("elastic"); ok {
		if len(a.Vals) != 2 {
			t.Fatalf("%s: elastic=%v: want elastic=(min, max)", d.Pos, a.Vals)
		}
		lo, err1 := strconv.Atoi(a.Vals[0])
		hi, err2 := strconv.Atoi(a.Vals[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: elastic=%v: want two process counts", d.Pos, a.Vals)
		}
		sp.Elastic = &raftfsm.ElasticSpec{MinNP: lo, MaxNP: hi, Deadline: s.dur(t, d, "deadline", 0),
			Iterations: int64(s.num(t, d, "iterations", 0)), BudgetNH: s.float(t, d, "budget-nh", 0)}
	}
	if a, ok := d.Arg("array"); ok {
		lo, hi, _ := strings.Cut(a.SingleVal(t), "-")
		first, err1 := strconv.Atoi(lo)
		last, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: array=%s: want array=first-last", d.Pos, a.Vals[0])
		}
		sp.Array = &raftfsm.ArraySpec{Limit: s.num(t, d, "limit", 0)}
		for i := first; i <= last; i++ {
			sp.Array.Tasks = append(sp.Array.Tasks, i)
		}
	}
	for _, typ := range []string{raftfsm.DependAfterOK, raftfsm.DependAfterNotOK, raftfsm.DependAfterAny} {
		if a, ok := d.Arg(typ); ok {
			dep := raftfsm.Dependency{Type: typ}
			for _, v := range a.Vals {
				id, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					t.Fatalf("%s: %s=%s: want job numbers", d.Pos, typ, v)
				}
				dep.IDs = append(dep.IDs, id)
			}
			sp.Depend = append(sp.Depend, dep)
		}
	}
	s.w.do(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: name, Owner: s.str(t, d, "owner", "alice"), Spec: sp})
}

// probe changes one node's probe process: it exits, its heartbeat stops,
// or its heartbeat resumes.
func (s *scenario) probe(t *testing.T, d *datadriven.TestData) {
	t.Helper()
	args := s.positional(t, d, 2)
	n, kind := s.w.node(args[0]), args[1]
	i := slices.IndexFunc(n.Probes, func(b nodestate.ProbeBeat) bool { return b.Kind == kind })
	if i < 0 {
		t.Fatalf("%s: %s runs no %s probe: the kinds are %v", d.Pos, n.Name, kind, raftfsm.ProbeKinds)
	}
	key := n.Name + "/" + kind
	switch d.Cmd {
	case "probe-crash":
		n.Probes[i].State = probeplan.StateExited
	case "probe-hang":
		if s.w.frozen == nil {
			s.w.frozen = map[string]bool{}
		}
		s.w.frozen[key] = true
	case "probe-unhang":
		delete(s.w.frozen, key)
	}
}

// finish ends job j's current attempt with exit (default 0).
func (s *scenario) finish(t *testing.T, d *datadriven.TestData, j *raftfsm.Job) {
	t.Helper()
	code := s.num(t, d, "exit", 0)
	s.w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: j.ID, Attempt: j.Attempt, ExitCode: &code})
}

// net replaces a node's row of bandwidth readings, peer=Mbit/s, each
// measured now.
func (s *scenario) net(t *testing.T, d *datadriven.TestData) {
	t.Helper()
	n := s.w.node(s.positional(t, d, 1)[0])
	at := s.w.now.UnixMilli()
	n.Net = nil
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			continue
		}
		bw := s.float(t, d, a.Key, 0)
		n.Net = append(n.Net, nodestate.NetEntry{Peer: a.Key, AvailMbps: bw, PeakMbps: bw, BWAt: at})
	}
}

// raft commits any raft command from outside the leader, its body the
// JSON input below the command line.
func (s *scenario) raft(t *testing.T, d *datadriven.TestData) {
	t.Helper()
	typ := s.positional(t, d, 1)[0]
	var body bytes.Buffer
	if err := json.Compact(&body, []byte(d.Input)); err != nil {
		t.Fatalf("%s: the body of %s is not JSON: %v", d.Pos, typ, err)
	}
	b, err := json.Marshal(raftfsm.Command{V: raftfsm.Version, Type: typ, At: s.w.now, Body: body.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := raftfsm.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	s.w.logf("  %s %s%s", typ, body.String(), outcome(s.w.st.Apply(c)))
}

// jobs lists every job raft holds, one line each.
func (s *scenario) jobs() {
	for _, id := range s.w.st.SortedJobIDs() {
		j := s.w.st.Jobs[id]
		line := "  job " + strconv.FormatUint(id, 10) + " " + j.Owner + " " + string(j.State)
		if a := j.Current(); a != nil {
			line += " attempt " + strconv.Itoa(a.N) + " on"
			for _, h := range a.Hosts {
				line += " " + h.Node + ":" + strconv.Itoa(h.NP)
			}
		}
		if j.WaitReason != "" {
			line += " (" + j.WaitReason + ")"
		}
		s.w.logf("%s", line)
	}
}
