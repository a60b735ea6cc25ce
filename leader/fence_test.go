package leader

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestFenceConfig_Wait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    FenceConfig
		want time.Duration
	}{
		{FenceConfig{}, 0},
		{FenceConfig{ClockRate: 0.5, Slack: time.Second}, 0}, // no lease: off
		{FenceConfig{Lease: 4 * time.Second}, 4 * time.Second},
		{FenceConfig{Lease: 4 * time.Second, ClockRate: 0.05, Slack: time.Second}, 5200 * time.Millisecond},
	} {
		if got := tc.c.Wait(); got != tc.want {
			t.Errorf("%+v.Wait() = %v, want %v", tc.c, got, tc.want)
		}
	}
}

// A lost node's attempt is retried only once the node's lease has surely
// lapsed, counted from the later of its last renewal and the start of
// this leader's term; never before, and without fencing at once.
func TestSchedule_LostNodeWaitsForItsLease(t *testing.T) {
	t.Parallel()
	fence := FenceConfig{Lease: 4 * time.Second, ClockRate: 0.05, Slack: time.Second} // Wait 5.2s
	for _, tc := range []struct {
		name    string
		fence   FenceConfig
		heard   map[string]time.Duration // before now
		leading time.Duration            // before now; 0 is long ago
		dead    []string
		// nodeLease is the lease the nodes renewed (their own configuration).
		nodeLease time.Duration
		fail      bool
	}{
		{name: "fencing off: at once", dead: []string{"n2"}, heard: map[string]time.Duration{"n2": 0}, fail: true},
		{name: "renewed just now: wait", fence: fence, dead: []string{"n2"}, heard: map[string]time.Duration{"n2": 0}},
		{name: "renewed inside the wait: wait", fence: fence, dead: []string{"n2"}, heard: map[string]time.Duration{"n2": 5199 * time.Millisecond}},
		{name: "renewed a wait ago: retry", fence: fence, dead: []string{"n2"}, heard: map[string]time.Duration{"n2": 5200 * time.Millisecond}, fail: true},
		{name: "never heard, leading long: retry", fence: fence, dead: []string{"n2"}, fail: true},
		{name: "never heard, new leader: wait from its term", fence: fence, dead: []string{"n2"}, leading: 5 * time.Second},
		{name: "old renewal, new leader: wait from its term", fence: fence, dead: []string{"n2"},
			heard: map[string]time.Duration{"n2": time.Minute}, leading: time.Second},
		{name: "new leader a wait ago: retry", fence: fence, dead: []string{"n2"}, leading: 5200 * time.Millisecond, fail: true},
		{name: "two lost: the later renewal counts", fence: fence, dead: []string{"n1", "n2"},
			heard: map[string]time.Duration{"n1": time.Minute, "n2": 3 * time.Second}},
		{name: "two lost, both lapsed: retry", fence: fence, dead: []string{"n1", "n2"},
			heard: map[string]time.Duration{"n1": time.Minute, "n2": 6 * time.Second}, fail: true},
		{name: "a live node's renewal does not hold a lost one", fence: fence, dead: []string{"n2"},
			heard: map[string]time.Duration{"n1": 0, "n2": time.Minute}, fail: true},
		{name: "a node's longer lease holds the retry", fence: fence, dead: []string{"n2"},
			heard: map[string]time.Duration{"n2": 6 * time.Second}, nodeLease: 10 * time.Second},
		{name: "a node's lease with the leader's fencing off", dead: []string{"n2"},
			heard: map[string]time.Duration{"n2": time.Second}, nodeLease: 4 * time.Second},
		{name: "a node's longer lease, lapsed", fence: fence, dead: []string{"n2"},
			heard: map[string]time.Duration{"n2": 12 * time.Second}, nodeLease: 10 * time.Second, fail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := launching(t, "n1", "n2")
			w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
			w.advance(2 * time.Minute)
			for _, n := range tc.dead {
				w.node(n).Status = nodestate.StatusDead
			}
			v := w.view()
			v.Config.Fence = tc.fence
			v.Heard = map[string]Renewal{}
			for n, ago := range tc.heard {
				v.Heard[n] = Renewal{At: v.Now.Add(-ago), Lease: tc.nodeLease}
			}
			if tc.leading > 0 {
				v.LeadingSince = v.Now.Add(-tc.leading)
			}
			cmds, _ := Schedule(v, JobsBook{})
			got := contains(commands(cmds), "fail_attempt")
			if got != tc.fail {
				t.Fatalf("commands %q: fail_attempt %v, want %v", commands(cmds), got, tc.fail)
			}
			if tc.fail && len(tc.dead) == 2 && !contains(commands(cmds), `"lost":["n1","n2"]`) {
				t.Errorf("commands %q: want both lost nodes kept off the retry", commands(cmds))
			}
		})
	}
}

// A head that loses a node fails the attempt before gossip declares the
// node dead; the retry is placed only once the lost node has applied the
// attempt's end (a renewal says how far its state got) or its lease has
// surely lapsed.
func TestSchedule_RetryWaitsForTheLostNodeToBeFenced(t *testing.T) {
	t.Parallel()
	fence := FenceConfig{Lease: 4 * time.Second, ClockRate: 0.05, Slack: time.Second}
	for _, tc := range []struct {
		name    string
		fence   FenceConfig
		heard   *Renewal // n2's last renewal; At is before now
		ago     time.Duration
		applied int64 // relative to the fail's index
		place   bool
	}{
		{name: "fencing off: placed", place: true},
		{name: "never heard, leading long: placed", fence: fence, place: true},
		{name: "renewed just now, behind the end: waits", fence: fence, heard: &Renewal{}, applied: -1},
		{name: "renewed just now, knows the end: placed", fence: fence, heard: &Renewal{}, applied: 0, place: true},
		{name: "renewed a wait ago, behind: placed", fence: fence, heard: &Renewal{}, ago: 5200 * time.Millisecond, applied: -1, place: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := launching(t, "n1", "n2")
			w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
			w.advance(2 * time.Minute)
			// The head reports n2 lost; gossip still has it alive.
			w.do(raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: 1, Attempt: 1, Reason: "lost node(s) [n2] during attempt 1", Retry: true, Lost: []string{"n2"}})
			// The world applies without raft's log index; raft's FSM records it.
			const failed = 40
			w.st.Jobs[1].Attempts[0].FailedIndex = failed
			v := w.view()
			v.Config.Fence = tc.fence
			if tc.heard != nil {
				v.Heard = map[string]Renewal{"n2": {At: v.Now.Add(-tc.ago), Applied: uint64(failed + tc.applied)}}
			}
			cmds, _ := Schedule(v, JobsBook{})
			placed := contains(commands(cmds), `place_job {"id":1,"attempt":2`)
			if placed != tc.place {
				t.Fatalf("commands %q: placed %v, want %v", commands(cmds), placed, tc.place)
			}
			if !tc.place && !contains(commands(cmds), "waiting for node n2, lost by attempt 1, to be fenced") {
				t.Errorf("commands %q: want the wait's reason", commands(cmds))
			}
		})
	}
}
