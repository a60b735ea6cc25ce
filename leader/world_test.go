package leader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/elastic"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// t0 is the scripted histories' epoch.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testConfig is the leader's configuration in these tests: the agent's
// defaults, with n1 leading.
func testConfig() Config {
	return Config{Self: "n1", Voters: 3, CoallocTimeout: 10 * time.Second,
		JobRetention: time.Hour, Elastic: elastic.DefaultConfig(),
		Probes: ProbeConfig{Supervise: probeplan.DefaultSuperviseConfig(), Budget: probeplan.DefaultBudgetConfig(),
			RoundLen: 6 * time.Second, BandwidthInterval: 5 * time.Minute}}
}

// testNode is an idle, alive four-core node running its three probes.
func testNode(name string) Node {
	n := Node{Name: name, Status: nodestate.StatusAlive, Since: t0, HasState: true, RaftAddr: name + ":7000", Server: true, ProbePort: 7949,
		Attrs: placement.Node{Cores: 4, Threads: 4, MHz: 2000, MemTotal: 8 << 30,
			MemAvail: nodestate.Means{Now: 6 << 30, M1: 6 << 30, M5: 6 << 30, M15: 6 << 30}}}
	for _, k := range raftfsm.ProbeKinds {
		n.Probes = append(n.Probes, nodestate.ProbeBeat{Kind: k, State: probeplan.StateRunning, Beat: 1})
	}
	return n
}

// world is a scripted cluster without a cluster: raft's state as a plain
// raftfsm.State, gossip as a list of Nodes, and the leader's Book. Its
// round does what the agent does with the core's answer (leading.go):
// propose in order, skip the rest of a placement once one is not taken,
// and feed raft's answers into the Book. Everything it does is written
// to out, the trace the scenarios (scenario_test.go) compare.
type world struct {
	t       testing.TB
	st      *raftfsm.State
	now     time.Time
	nodes   []Node
	servers []Server
	cfg     Config
	book    Book
	out     bytes.Buffer
	// frozen names the probes ("node/kind") whose heartbeat stopped.
	frozen map[string]bool
	// heard is the lease renewals the leader answered (View.Heard), and
	// leadingSince when it became leader (View.LeadingSince).
	heard        map[string]Renewal
	leadingSince time.Time
}

func newWorld(t testing.TB, names ...string) *world {
	w := &world{t: t, st: raftfsm.NewState(), now: t0, cfg: testConfig()}
	for _, n := range names {
		w.nodes = append(w.nodes, testNode(n))
	}
	w.servers = []Server{{ID: "n1", Addr: "n1:7000", Voter: true}}
	return w
}

func (w *world) node(name string) *Node {
	for i := range w.nodes {
		if w.nodes[i].Name == name {
			return &w.nodes[i]
		}
	}
	w.t.Fatalf("no node %s", name)
	return nil
}

// setStatus changes a node's liveness as gossip would, now.
func (w *world) setStatus(name string, s nodestate.Status) {
	n := w.node(name)
	n.Status, n.Since = s, w.now
	w.logf("gossip: %s is %s", name, s)
}

func (w *world) advance(d time.Duration) {
	w.now = w.now.Add(d)
	w.logf("-- t=+%v", w.now.Sub(t0))
}

func (w *world) view() View {
	return View{Now: w.now, State: w.st, Nodes: slices.Clone(w.nodes), Servers: slices.Clone(w.servers), Config: w.cfg,
		Heard: maps.Clone(w.heard), LeadingSince: w.leadingSince}
}

func (w *world) logf(format string, args ...any) {
	fmt.Fprintf(&w.out, format+"\n", args...)
}

// apply commits one command to raft's state, as raft would, and returns
// the FSM's answer.
func (w *world) apply(typ string, body any) raftfsm.Result {
	w.t.Helper()
	b, err := raftfsm.Encode(typ, w.now, body)
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := raftfsm.Decode(b)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.st.Apply(c)
}

// do is a command from outside the leader (a user, a node): applied and
// logged.
func (w *world) do(typ string, body any) raftfsm.Result {
	w.t.Helper()
	res := w.apply(typ, body)
	w.logf("  %s %s%s", typ, js(body), outcome(res))
	return res
}

func outcome(res raftfsm.Result) string {
	switch {
	case res.Err != nil:
		return fmt.Sprintf(" -> refused %s: %v", raftfsm.Code(res.Err), res.Err)
	case res.Noop:
		return " -> noop"
	}
	return ""
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// round runs the whole leader once and carries out what it decided.
func (w *world) round() Ready {
	w.t.Helper()
	r := Round(w.view(), w.book)
	w.book = r.Book
	for _, a := range r.Membership {
		w.logf("  leader: %s %s (%s)", a.Kind, a.ID, a.Why)
		if a.Kind == ActAdd {
			w.servers = slices.DeleteFunc(w.servers, func(s Server) bool { return s.ID == a.ID })
			w.servers = append(w.servers, Server{ID: a.ID, Addr: a.Addr})
		}
	}
	CarryOut(w, r.Commands)
	return r
}

// Propose commits one of the leader's commands, as raft would, and logs
// it with the FSM's answer and the notes the agent would log.
func (w *world) Propose(c Command) (Answer, error) {
	res := w.apply(c.Type, c.Body)
	line := "  leader: " + c.Type + " " + js(c.Body) + outcome(res)
	for _, n := range []*Note{c.Before, c.After} {
		if n != nil && (n == c.Before || res.Err == nil) {
			line += " [" + n.Msg + "]"
		}
	}
	w.logf("%s", line)
	if res.Err != nil {
		return Answer{Code: raftfsm.Code(res.Err), Err: res.Err.Error()}, nil
	}
	return Answer{}, nil
}

// Answered folds raft's answer into the world's Book, as the agent does.
func (w *world) Answered(c Command, a Answer) { w.book = w.book.Answered(c, a) }

// Skipped logs a placement command the round left out.
func (w *world) Skipped(c Command) { w.logf("  leader: (skipped) %s %s", c.Type, js(c.Body)) }

var _ Proposer = (*world)(nil)

// nodesAct is what the nodes do between rounds: every alive node acks
// the reservations of launching attempts it holds (but those in hung),
// and reports its probes as raft's generation asks (a relaunched probe
// runs the new generation and beats again).
func (w *world) nodesAct(hung ...string) {
	for _, id := range w.st.SortedJobIDs() {
		j := w.st.Jobs[id]
		att := j.Current()
		if j.State != raftfsm.StateLaunching || att == nil {
			continue
		}
		for _, h := range att.Hosts {
			if slices.Contains(hung, h.Node) || slices.Contains(att.Acks, h.Node) || w.node(h.Node).Status != nodestate.StatusAlive {
				continue
			}
			w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: j.ID, Attempt: att.N, Node: h.Node})
		}
	}
	for i := range w.nodes {
		n := &w.nodes[i]
		for k := range n.Probes {
			b := &n.Probes[k]
			if p, ok := w.st.Probes[raftfsm.ProbeKey{Node: n.Name, Kind: b.Kind}]; ok && uint64(b.Restarts) < p.Generation {
				b.Restarts, b.State, b.Beat = int(p.Generation), probeplan.StateRunning, w.now.UnixMilli()
				w.logf("  %s: %s probe relaunched (generation %d)", n.Name, b.Kind, p.Generation)
			} else if b.State == probeplan.StateRunning && !w.frozen[n.Name+"/"+b.Kind] {
				b.Beat = w.now.UnixMilli()
			}
		}
	}
}

// commands lists a round's commands as "type body" lines, for table tests.
func commands(cmds []Command) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Type+" "+js(c.Body))
	}
	return out
}

func submit(w *world, req string, spec raftfsm.JobSpec) uint64 {
	w.t.Helper()
	if spec.Cmd == nil {
		spec.Cmd = []string{"./" + req}
	}
	res := w.do(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: req, Owner: "alice", Spec: spec})
	if res.Err != nil {
		w.t.Fatalf("submit %s: %v", req, res.Err)
	}
	return res.JobID
}

func contains(lines []string, sub string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, sub) })
}

// wantCommands fails unless cmds are as many as want, each containing
// its want.
func wantCommands(t *testing.T, cmds []Command, want []string) {
	t.Helper()
	got := commands(cmds)
	if len(got) != len(want) {
		t.Fatalf("commands %q, want %d like %q", got, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("command %d = %s, want it to contain %s", i, got[i], w)
		}
	}
}

// placeAndAck places job id's first attempt on hosts (one process each)
// and has every node in acks reserve.
func placeAndAck(w *world, id uint64, hosts []string, acks ...string) {
	var hs []raftfsm.Host
	for _, h := range hosts {
		hs = append(hs, raftfsm.Host{Node: h, NP: 1})
	}
	w.do(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: hs})
	for _, n := range acks {
		w.do(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: n})
	}
}
