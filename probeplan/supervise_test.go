package probeplan

import (
	"testing"
	"time"
)

func TestSuperviseConfig_Backoff(t *testing.T) {
	t.Parallel()
	c := SuperviseConfig{BackoffBase: time.Second, BackoffMax: 10 * time.Second}
	for streak, want := range []time.Duration{0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		if got := c.Backoff(streak); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", streak, got, want)
		}
	}
}

func TestSupervisor_Decide(t *testing.T) {
	t.Parallel()
	cfg := SuperviseConfig{StaleAfter: 10 * time.Second, BackoffBase: time.Second, BackoffMax: time.Minute, StableAfter: time.Minute}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var s Supervisor
	decide := func(now time.Time, views []ProbeView) []Restart {
		before := len(s.Seen)
		r, next := s.Decide(cfg, now, views)
		if len(s.Seen) != before {
			t.Fatal("Decide changed its receiver")
		}
		s = next
		return r
	}
	run := ProbeView{Node: "a", Kind: "latency", State: StateRunning, Beat: 1}
	if r := decide(t0, []ProbeView{run}); len(r) != 0 {
		t.Fatalf("healthy probe relaunched: %v", r)
	}
	// Beats change: never stale.
	run.Beat = 2
	if r := decide(t0.Add(9*time.Second), []ProbeView{run}); len(r) != 0 {
		t.Fatalf("beating probe relaunched: %v", r)
	}
	// No change for StaleAfter: hung.
	r := decide(t0.Add(19*time.Second), []ProbeView{run})
	if len(r) != 1 || r[0].Generation != 0 || r[0].Reason != "no heartbeat for 10s" {
		t.Fatalf("hung probe: %v", r)
	}
	// The node has not caught up with generation 1 yet: nothing twice.
	at := t0.Add(19 * time.Second)
	if r := decide(at.Add(time.Second), []ProbeView{{Node: "a", Kind: "latency", State: StateExited, Desired: 1, LastRestart: at}}); len(r) != 0 {
		t.Fatalf("ordered twice: %v", r)
	}
	// Caught up and exited again at once: second in a row waits BackoffBase.
	ex := ProbeView{Node: "a", Kind: "latency", State: StateExited, Running: 1, Desired: 1, LastRestart: at}
	if r := decide(at.Add(500*time.Millisecond), []ProbeView{ex}); len(r) != 0 {
		t.Fatalf("no backoff: %v", r)
	}
	if r := decide(at.Add(time.Second), []ProbeView{ex}); len(r) != 1 || r[0].Generation != 1 || r[0].Reason != "process exited" {
		t.Fatalf("after backoff: %v", r)
	}
	// Third in a row waits 2s.
	at2 := at.Add(time.Second)
	ex = ProbeView{Node: "a", Kind: "latency", State: StateExited, Running: 2, Desired: 2, LastRestart: at2}
	if r := decide(at2.Add(1500*time.Millisecond), []ProbeView{ex}); len(r) != 0 {
		t.Fatalf("third relaunch too early: %v", r)
	}
	if r := decide(at2.Add(2*time.Second), []ProbeView{ex}); len(r) != 1 {
		t.Fatalf("third relaunch: %v", r)
	}
	// A probe that ran longer than StableAfter starts over: immediate.
	at3 := at2.Add(2 * time.Second)
	ex = ProbeView{Node: "a", Kind: "latency", State: StateExited, Running: 3, Desired: 3, LastRestart: at3}
	if r := decide(at3.Add(2*time.Minute), []ProbeView{ex}); len(r) != 1 {
		t.Fatalf("stable probe not relaunched at once: %v", r)
	}
}

func TestCycleHelpers(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rounds := Orient(Rounds([]string{"a", "b", "c", "d"}), 1)
	if len(rounds) != 3 || rounds[0][0].From <= rounds[0][0].To {
		t.Fatalf("odd cycle should send B→A: %v", rounds)
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{-time.Second, -1}, {0, 0}, {1999 * time.Millisecond, 0}, {2 * time.Second, 1}, {5 * time.Second, 2}, {time.Hour, 3}} {
		if got := RoundAt(t0, 2*time.Second, 3, t0.Add(tc.at)); got != tc.want {
			t.Errorf("RoundAt(+%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
	gone := func(n string) bool { return n == "c" }
	if !Involves(rounds, 1, gone) {
		t.Fatal("c is in later rounds")
	}
	rest := Remaining(rounds, 0, gone)
	if len(rest) != 2 || Involves(rest, 0, gone) || len(rest[0])+len(rest[1]) != 2 {
		t.Fatalf("Remaining: %v", rest)
	}
	if got := NextCycleAt(t0, t0, 3, 2*time.Second, 5*time.Minute); !got.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("NextCycleAt (short cycle) = %v", got)
	}
	if got := NextCycleAt(t0, t0.Add(time.Minute), 200, 2*time.Second, 5*time.Minute); !got.Equal(t0.Add(time.Minute + 400*time.Second)) {
		t.Errorf("NextCycleAt (long cycle) = %v", got)
	}
}
