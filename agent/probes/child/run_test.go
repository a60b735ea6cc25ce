package child

import (
	"context"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/probe"
)

// start runs Run for kind over pipes and returns the agent's ends: a
// writer to the probe's stdin and the messages it writes, and Run's
// result.
func start(t *testing.T, kind string) (*Writer, io.Closer, <-chan Msg, <-chan error) {
	t.Helper()
	return startWith(t, kind, nil)
}

// startWith is start with the nodestate probe reading sampler.
func startWith(t *testing.T, kind string, sampler probe.Sampler) (*Writer, io.Closer, <-chan Msg, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Run(ctx, kind, inR, outW, sampler, nil)
		outW.Close()
		inR.Close()
		done <- err
	}()
	msgs := make(chan Msg, 64)
	go func() {
		_ = ReadLines(outR, func(m Msg) { msgs <- m })
		close(msgs)
	}()
	return NewWriter(inW), inW, msgs, done
}

// wait returns the first message of type typ, failing after a deadline.
func wait(t *testing.T, msgs <-chan Msg, typ string) Msg {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("the probe ended before writing a %q message", typ)
			}
			if m.Type == typ {
				return m
			}
		case <-deadline:
			t.Fatalf("no %q message within 20s", typ)
		}
	}
}

func result(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20s")
		return nil
	}
}

// TestRun_NodestateBeatsAndSamplesUntilStdinCloses runs the nodestate
// probe on this host: it beats, samples, and ends cleanly when the agent
// closes its stdin.
func TestRun_NodestateBeatsAndSamplesUntilStdinCloses(t *testing.T) {
	t.Parallel()
	w, stdin, msgs, done := start(t, "nodestate")
	if err := w.Send(Msg{Type: TypeConfig, Kind: "nodestate", Node: "n1", BeatMS: 20, SampleMS: 20}); err != nil {
		t.Fatal(err)
	}
	wait(t, msgs, TypeBeat)
	if m := wait(t, msgs, TypeSample); m.Sample == nil || m.Sample.At.IsZero() {
		t.Fatalf("sample message without a sample: %+v", m)
	}
	stdin.Close()
	if err := result(t, done); err != nil {
		t.Fatalf("Run after stdin closed = %v, want nil", err)
	}
}

// TestRun_LatencyReconfigured is a SIGHUP's new latency_interval reaching
// a running latency probe: at one ping an hour it measures once, when it
// learns its peer; after a second config line at 100ms it measures again
// and again.
func TestRun_LatencyReconfigured(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	srv, err := probe.Listen("127.0.0.1", 0, probe.ServerConfig{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	w, stdin, msgs, done := start(t, "latency")
	cfg := Msg{Type: TypeConfig, Kind: "latency", Node: "n1", Key: key, BeatMS: 20, LatencyMS: time.Hour.Milliseconds()}
	if err := w.Send(cfg); err != nil {
		t.Fatal(err)
	}
	peer := Peer{Name: "n2", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port()))}
	if err := w.Send(Msg{Type: TypePeers, Peers: []Peer{peer}}); err != nil {
		t.Fatal(err)
	}
	if m := wait(t, msgs, TypeRTT); len(m.RTTs) != 1 || m.RTTs[0].Peer != "n2" {
		t.Fatalf("first measurement %+v, want one RTT to n2", m)
	}
	cfg.LatencyMS = 100
	if err := w.Send(cfg); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wait(t, msgs, TypeRTT) // within wait's deadline, far below the hour
	}
	stdin.Close()
	if err := result(t, done); err != nil {
		t.Fatalf("Run after stdin closed = %v, want nil", err)
	}
}

// TestRun_RefusesBadStart: a probe needs its configuration, for its own
// kind, as the first line, and a kind it knows.
func TestRun_RefusesBadStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind string
		first      *Msg // nil: stdin closes at once
		want       string
	}{
		{"no configuration", "latency", nil, "no configuration"},
		{"not a config", "latency", &Msg{Type: TypePeers}, "want config"},
		{"another kind's config", "latency", &Msg{Type: TypeConfig, Kind: "bandwidth"}, "want config"},
		{"unknown kind", "gpu", &Msg{Type: TypeConfig, Kind: "gpu"}, `no probe kind "gpu"`},
		{"bandwidth without a CA", "bandwidth", &Msg{Type: TypeConfig, Kind: "bandwidth"}, "no CA certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, stdin, _, done := start(t, tc.kind)
			if tc.first != nil {
				if err := w.Send(*tc.first); err != nil {
					t.Fatal(err)
				}
			} else {
				stdin.Close()
			}
			err := result(t, done)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestReadLines_RefusesGarbage: a line that is not a message ends the
// stream with an error, so the agent kills a probe that writes nonsense.
func TestReadLines_RefusesGarbage(t *testing.T) {
	t.Parallel()
	var got []Msg
	err := ReadLines(strings.NewReader("{\"type\":\"beat\"}\nnot json\n{\"type\":\"beat\"}\n"), func(m Msg) { got = append(got, m) })
	if err == nil || len(got) != 1 {
		t.Fatalf("ReadLines = %v after %d messages, want an error after 1", err, len(got))
	}
}

// TestChild_DoesNotImportAgent keeps the probe process's body apart from
// the agent: `shoal probe KIND` must not need the agent's code.
func TestChild_DoesNotImportAgent(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list imports with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/shoal-hpc/shoal/agent" || strings.HasPrefix(p, "github.com/shoal-hpc/shoal/agent/") && p != "github.com/shoal-hpc/shoal/agent/probes/child" {
			t.Errorf("the probe child imports %s; it must not link the agent", p)
		}
	}
}

// counters is a sampler whose traffic counters the test moves: the
// boundary a test cannot drive on the host's real interfaces.
type counters struct {
	rate    atomic.Uint64 // bytes added to each direction at every read
	rx, tx  atomic.Uint64
	samples atomic.Int64
}

func (c *counters) Sample(context.Context) (probe.RawSample, error) {
	c.samples.Add(1)
	rx, tx, _ := c.Traffic(context.Background())
	return probe.RawSample{At: time.Now(), RxBytes: rx, TxBytes: tx, NetBytes: rx + tx}, nil
}

func (c *counters) Traffic(context.Context) (uint64, uint64, error) {
	r := c.rate.Load()
	return c.rx.Add(r), c.tx.Add(r), nil
}

// TestRun_NodestateSamplesWhenTrafficShifts: with an hour between
// samples, a flow that starts and then stops is each time sampled within
// the watch period, not at the next tick, and the sample carries the
// rates of the reading that saw the shift.
func TestRun_NodestateSamplesWhenTrafficShifts(t *testing.T) {
	t.Parallel()
	c := &counters{}
	w, stdin, msgs, done := startWith(t, "nodestate", c)
	if err := w.Send(Msg{Type: TypeConfig, Kind: "nodestate", Node: "n1", BeatMS: 3_600_000, SampleMS: 3_600_000}); err != nil {
		t.Fatal(err)
	}
	wait(t, msgs, TypeSample) // at start
	c.rate.Store(50_000_000)  // a flow starts
	started := wait(t, msgs, TypeSample)
	c.rate.Store(0) // and stops
	stopped := wait(t, msgs, TypeSample)
	if !stopped.Sample.At.After(started.Sample.At) {
		t.Fatalf("samples at %v then %v", started.Sample.At, stopped.Sample.At)
	}
	// Each carries the rates of the reading that called for it, what is
	// on the link now: the flow's, then none.
	if s := started.Sample; s.RecentSpan <= 0 || s.RecentRx <= 0 || s.RecentTx <= 0 {
		t.Fatalf("the sample the flow's start called for has recent rates %v, %v over %v; want the flow's", s.RecentRx, s.RecentTx, s.RecentSpan)
	}
	if s := stopped.Sample; s.RecentSpan <= 0 || s.RecentRx != 0 || s.RecentTx != 0 {
		t.Fatalf("the sample the flow's end called for has recent rates %v, %v over %v; want 0, 0", s.RecentRx, s.RecentTx, s.RecentSpan)
	}
	stdin.Close()
	if err := result(t, done); err != nil {
		t.Fatal(err)
	}
}
