package raftnode

import (
	"context"
	"fmt"
	"net"
	"syscall"
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
// agent's default timings) the watcher's reload would be refused and the
// watcher would do nothing. Start keeps the lease under the timeout: the
// reload is accepted and leaves the configured timeout in place.
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

func TestShouldDialLeader(t *testing.T) {
	t.Parallel()
	hb := 250 * time.Millisecond
	last := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	due := last.Add(hb)
	for _, c := range []struct {
		name             string
		now              time.Time
		kicked, nextDial time.Time
		rank             int
		want             bool
	}{
		{"silent a timeout, first in line", due, time.Time{}, time.Time{}, 0, true},
		{"not yet silent a timeout", due.Add(-time.Millisecond), time.Time{}, time.Time{}, 0, false},
		{"second in line waits its step", due, time.Time{}, time.Time{}, 1, false},
		{"not a survivor that votes", due.Add(time.Hour), time.Time{}, time.Time{}, -1, false},
		{"this silence was acted on", due.Add(time.Second), last, time.Time{}, 0, false},
		{"an earlier silence was acted on", due, last.Add(-time.Minute), time.Time{}, 0, true},
		{"the leader answered a step ago: wait", due, time.Time{}, due.Add(time.Millisecond), 0, false},
		{"the step after an answer is over", due.Add(LeaderLossStep(hb)), time.Time{}, due.Add(LeaderLossStep(hb)), 0, true},
	} {
		if got := shouldDialLeader(c.now, last, c.kicked, c.nextDial, hb, c.rank); got != c.want {
			t.Errorf("%s: dial %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDialLeaderTellsAGoneProcessFromASlowOne: the watcher acts only on a
// refused connection (no process listens: the leader is gone); a port
// that accepts (a live, perhaps starved, leader) must not read as gone,
// nor a dial that timed out.
func TestDialLeaderTellsAGoneProcessFromASlowOne(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	// A socket bound to a port but not listening holds the port, so no
	// other test takes it, and the kernel refuses connections to it: a
	// process that died.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	gone := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	ctx := context.Background()
	// Nobody accepts on ln: the kernel completes the handshake anyway, as
	// it does for a process too starved to run.
	if err := dialLeader(ctx, ln.Addr().String(), time.Second); err != nil || leaderGone(err) {
		t.Errorf("a listening port: %v, want a connection", err)
	}
	if err := dialLeader(ctx, gone, time.Second); !leaderGone(err) {
		t.Errorf("a bound port nobody listens on: %v, want connection refused", err)
	}
	if leaderGone(context.DeadlineExceeded) || leaderGone(syscall.EHOSTUNREACH) {
		t.Error("a dial that timed out or found no route read as a gone leader")
	}
}
