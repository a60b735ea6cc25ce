package events

import (
	"slices"
	"testing"
	"time"
)

func TestDiffNode(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	every := 5 * time.Second
	alive := &NodeMark{Status: "alive", Boot: 1, Seq: 1, Told: t0}
	with := func(f func(m *NodeMark)) *NodeMark { m := *alive; f(&m); return &m }
	for _, tc := range []struct {
		name      string
		prev, cur *NodeMark
		at        time.Duration
		want      []string
		wantTold  time.Duration // from t0; -1: gone
	}{
		{"joined", nil, alive, 0, []string{"alive"}, 0},
		{"joined draining", nil, with(func(m *NodeMark) { m.Drain = "draining" }), 0, []string{"alive", "draining"}, 0},
		{"suspect at once", alive, with(func(m *NodeMark) { m.Status = "suspect" }), time.Second, []string{"suspect"}, time.Second},
		{"dead", alive, with(func(m *NodeMark) { m.Status = "dead" }), time.Second, []string{"dead"}, time.Second},
		{"restarted", alive, with(func(m *NodeMark) { m.Boot = 2; m.Seq = 1 }), time.Second, []string{"restarted"}, time.Second},
		{"drained", alive, with(func(m *NodeMark) { m.Drain = "drained" }), time.Second, []string{"drained"}, time.Second},
		{"undrained", with(func(m *NodeMark) { m.Drain = "drained" }), alive, time.Second, []string{"undrained"}, time.Second},
		{"update too soon", alive, with(func(m *NodeMark) { m.Seq = 2 }), time.Second, nil, 0},
		{"update in time", alive, with(func(m *NodeMark) { m.Seq = 2 }), every, []string{"updated"}, every},
		{"removed", alive, nil, time.Second, []string{"removed"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, next := DiffNode(tc.prev, tc.cur, t0.Add(tc.at), every)
			if !slices.Equal(got, tc.want) {
				t.Errorf("DiffNode = %v, want %v", got, tc.want)
			}
			switch {
			case tc.wantTold < 0 && next != nil:
				t.Errorf("a removed node kept a mark %+v", next)
			case tc.wantTold >= 0 && (next == nil || !next.Told.Equal(t0.Add(tc.wantTold))):
				t.Errorf("mark %+v, want told at +%v", next, tc.wantTold)
			}
		})
	}
}

// An update held back is told at the next look after the interval, even
// with no newer update: the kept mark still holds the version last told.
func TestDiffNodeHeldUpdateToldLater(t *testing.T) {
	t.Parallel()
	t0, every := time.Unix(1000, 0), 5*time.Second
	prev := &NodeMark{Status: "alive", Boot: 1, Seq: 1, Told: t0}
	cur := &NodeMark{Status: "alive", Boot: 1, Seq: 2}
	got, next := DiffNode(prev, cur, t0.Add(time.Second), every)
	if len(got) != 0 {
		t.Fatalf("too soon: %v", got)
	}
	if got, _ = DiffNode(next, cur, t0.Add(every), every); !slices.Equal(got, []string{"updated"}) {
		t.Fatalf("later look = %v, want updated", got)
	}
}

func TestDiffProbe(t *testing.T) {
	t.Parallel()
	run := &ProbeMark{State: "running", PID: 10}
	for _, tc := range []struct {
		name      string
		prev, cur *ProbeMark
		want      []string
	}{
		{"new", nil, run, []string{"running"}},
		{"same", run, &ProbeMark{State: "running", PID: 10}, nil},
		{"stale", run, &ProbeMark{State: "stale", PID: 10}, []string{"stale"}},
		{"restarted by the leader", run, &ProbeMark{State: "starting", PID: 11, Restarts: 1}, []string{"restarted", "starting"}},
		{"new process", run, &ProbeMark{State: "running", PID: 12}, []string{"restarted"}},
		{"gone", run, nil, []string{"removed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DiffProbe(tc.prev, tc.cur); !slices.Equal(got, tc.want) {
				t.Errorf("DiffProbe = %v, want %v", got, tc.want)
			}
		})
	}
}
