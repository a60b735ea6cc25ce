package raftnode

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestLeaderLossDue(t *testing.T) {
	t.Parallel()
	hb := 250 * time.Millisecond
	step := LeaderLossStep(hb)
	last := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		silent time.Duration
		rank   int
		last   time.Time
		want   bool
	}{
		{"heard within the timeout", hb - time.Millisecond, 0, last, false},
		{"silent a whole timeout, first in line", hb, 0, last, true},
		{"silent a whole timeout, second in line waits its step", hb, 1, last, false},
		{"second in line after its step", hb + step, 1, last, true},
		{"third in line just before its steps", hb + 2*step - time.Millisecond, 2, last, false},
		{"never heard a leader: raft's own timer", time.Hour, 0, time.Time{}, false},
	} {
		now := last.Add(c.silent)
		if c.last.IsZero() {
			now = time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
		}
		if got := LeaderLossDue(now, c.last, hb, c.rank); got != c.want {
			t.Errorf("%s: due %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLeaderLossRank(t *testing.T) {
	t.Parallel()
	servers := []raft.Server{
		{ID: "n3", Suffrage: raft.Voter}, {ID: "n1", Suffrage: raft.Voter},
		{ID: "n2", Suffrage: raft.Voter}, {ID: "n0", Suffrage: raft.Nonvoter},
	}
	for _, c := range []struct {
		self, leader raft.ServerID
		want         int
	}{
		{"n1", "n2", 0}, {"n3", "n2", 1}, // the survivors, by ID
		{"n2", "n1", 0}, {"n3", "n1", 1},
		{"n2", "n2", -1}, // the leader does not watch itself
		{"n0", "n2", -1}, // a non-voter never campaigns
		{"n9", "n2", -1}, // not in the configuration
	} {
		if got := LeaderLossRank(servers, c.self, c.leader); got != c.want {
			t.Errorf("rank of %s with leader %s: %d, want %d", c.self, c.leader, got, c.want)
		}
	}
}

// TestCheckHeartbeatNowIsAccepted: raft refuses a heartbeat timeout below
// the leader lease, so with the lease at the heartbeat timeout (the
// agent's default timings) the watcher's reload was refused and the
// watcher did nothing. Start keeps the lease under it; the reload must
// be accepted and leave the configured timeout in place.
func TestCheckHeartbeatNowIsAccepted(t *testing.T) {
	t.Parallel()
	hb := 250 * time.Millisecond
	if got := leaseUnderHeartbeat(hb, hb); got >= hb {
		t.Fatalf("lease %v for heartbeat %v: want under it", got, hb)
	}
	if got := leaseUnderHeartbeat(100*time.Millisecond, hb); got != 100*time.Millisecond {
		t.Fatalf("a lease already under the heartbeat timeout changed to %v", got)
	}
	n, err := Start(Config{ID: "n0", Backend: memBackend{}, FSM: raftfsm.New(),
		Timings: Timings{HeartbeatTimeout: hb, ElectionTimeout: hb, LeaderLeaseTimeout: hb, CommitTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Raft.Shutdown().Error() })
	if err := checkHeartbeatNow(n.Raft); err != nil {
		t.Fatalf("re-arming the heartbeat check: %v", err)
	}
	if got := n.Raft.ReloadableConfig().HeartbeatTimeout; got != hb {
		t.Fatalf("heartbeat timeout after the check %v, want %v", got, hb)
	}
}

// memBackend is raft's in-memory transport and stores: a fake at the
// network and disk, for a single node that never leaves the test.
type memBackend struct{}

func (memBackend) HasState() bool { return false }

func (memBackend) Open(Config, hclog.Logger) (Parts, error) {
	_, tr := raft.NewInmemTransport("")
	st := raft.NewInmemStore()
	return Parts{Transport: tr, Logs: st, Stable: st, Snapshots: raft.NewInmemSnapshotStore()}, nil
}
