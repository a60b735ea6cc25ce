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
