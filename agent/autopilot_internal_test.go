package agent

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
	autopilot "github.com/hashicorp/raft-autopilot"
)

// TestPromoter_InjectedClock: the promoter reads how long a non-voter
// has been healthy against the agent's clock, not the wall clock: a
// standby healthy for 5 s of the clock's time stays a non-voter under a
// 10 s stabilisation time, and is promoted once the clock is 11 s on.
func TestPromoter_InjectedClock(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // years after the wall clock: time.Now would promote
	srv := func(id string, st autopilot.RaftState) *autopilot.ServerState {
		return &autopilot.ServerState{Server: autopilot.Server{ID: raft.ServerID(id), NodeStatus: autopilot.NodeAlive}, State: st,
			Health: autopilot.ServerHealth{Healthy: true, StableSince: t0}}
	}
	state := &autopilot.State{Leader: "a", Servers: map[raft.ServerID]*autopilot.ServerState{
		"a": srv("a", autopilot.RaftLeader), "b": srv("b", autopilot.RaftNonVoter)}}
	cfg := &autopilot.Config{ServerStabilizationTime: 10 * time.Second, Ext: 3}
	for _, c := range []struct {
		after   time.Duration
		promote bool
	}{{5 * time.Second, false}, {11 * time.Second, true}} {
		now := t0.Add(c.after)
		got := promoter{clock: func() time.Time { return now }}.CalculatePromotionsAndDemotions(cfg, state)
		if promoted := len(got.Promotions) == 1 && got.Promotions[0] == "b"; promoted != c.promote {
			t.Errorf("healthy for %v of a 10s stabilisation: changes %+v, want b promoted %v", c.after, got, c.promote)
		}
	}
}

// TestPromoter_LogFault: a voter that gossips a raft log fault is demoted
// and a healthy standby promoted in its place; a standby with the fault
// is never promoted, and is promoted again once it clears.
func TestPromoter_LogFault(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	srv := func(id string, st autopilot.RaftState, fault string) *autopilot.ServerState {
		s := &autopilot.ServerState{Server: autopilot.Server{ID: raft.ServerID(id), NodeStatus: autopilot.NodeAlive}, State: st,
			Health: autopilot.ServerHealth{Healthy: fault == "", StableSince: t0}}
		if fault != "" {
			s.Server.Meta = map[string]string{metaLogFault: fault}
		}
		return s
	}
	cfg := &autopilot.Config{ServerStabilizationTime: time.Second, Ext: 3}
	p := promoter{clock: func() time.Time { return now }}
	full := "raft log write failed: no space left on device"

	state := &autopilot.State{Leader: "a", Servers: map[raft.ServerID]*autopilot.ServerState{
		"a": srv("a", autopilot.RaftLeader, ""), "b": srv("b", autopilot.RaftVoter, full),
		"c": srv("c", autopilot.RaftVoter, ""), "d": srv("d", autopilot.RaftNonVoter, "")}}
	got := p.CalculatePromotionsAndDemotions(cfg, state)
	if len(got.Demotions) != 1 || got.Demotions[0] != "b" || len(got.Promotions) != 1 || got.Promotions[0] != "d" {
		t.Fatalf("voter b cannot write its log: changes %+v, want b demoted and d promoted", got)
	}

	state = &autopilot.State{Leader: "a", Servers: map[raft.ServerID]*autopilot.ServerState{
		"a": srv("a", autopilot.RaftLeader, ""), "c": srv("c", autopilot.RaftVoter, ""), "b": srv("b", autopilot.RaftNonVoter, full)}}
	if got := p.CalculatePromotionsAndDemotions(cfg, state); len(got.Promotions) != 0 {
		t.Fatalf("standby b cannot write its log: changes %+v, want no promotion", got)
	}
	state.Servers["b"] = srv("b", autopilot.RaftNonVoter, "")
	if got := p.CalculatePromotionsAndDemotions(cfg, state); len(got.Promotions) != 1 || got.Promotions[0] != "b" {
		t.Fatalf("standby b writes again: changes %+v, want b promoted", got)
	}
}
