package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/shoal-hpc/shoal/agent/fence"
	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/agent/probes"
	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/agent/rows"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/tlsca"
)

// Config is everything an agent needs. Start from DefaultConfig.
type Config struct {
	// Name is the node's unique name. Default: the hostname.
	Name string
	// BindAddr is the IP every listener binds. Default "0.0.0.0".
	BindAddr string
	// AdvertiseAddr is the IP others use to reach this node. Default:
	// BindAddr when it is a specific address.
	AdvertiseAddr string
	// GossipPort (TCP+UDP), RaftPort and HTTPPort; 0 picks a free port,
	// which tests use. Defaults 7946, 7947, 7948.
	GossipPort, RaftPort, HTTPPort int
	// Join lists "host" or "host:port" addresses of agents to join; retried
	// with backoff until one answers or the agent stops.
	Join []string
	// DataDir holds raft's log, stable store and snapshots. Required.
	DataDir string
	// Socket is the path of the Unix socket on which local users reach the
	// API without the token, authenticated by the kernel (SO_PEERCRED) and
	// allowed to act only as themselves (root as anyone). Default ""
	// means DataDir/shoal.sock; SocketOff ("none") turns it off.
	Socket string
	// Token is the cluster secret: it derives the cluster CA (TLS for the
	// API and raft), authenticates API calls inside TLS and (through a
	// derived key) encrypts gossip. Required.
	Token string
	// TLS replaces the CA derived from Token with a site's files. Zero
	// value: the derived CA and a leaf issued from it.
	TLS TLSFiles
	// LeafTTL is the life of the leaf an agent issues itself from the
	// derived CA; it is renewed at half-life. Default 24h.
	LeafTTL time.Duration
	// SampleInterval is how often node state is sampled and gossiped.
	// Default 3s.
	SampleInterval time.Duration
	// PEs are processing elements declared by the operator (--pe KIND=COUNT).
	PEs []nodestate.PE
	// Switch is the rack or switch the node hangs off, if declared.
	Switch string
	// Features are the operator's names for what the node offers (avx512,
	// ib, bigmem), which jobs select on with --constraint.
	Features []string

	// BootstrapExpect is how many agents must see each other before the
	// raft cluster bootstraps. Default 3; 1 for a single node.
	BootstrapExpect int
	// Voters is the target number of raft voters. Default BootstrapExpect.
	Voters int
	// Servers is the target number of raft servers, voters included: the
	// leader keeps this many agents in raft (the voters plus warm-standby
	// non-voters) and every other agent is a client that follows the
	// state from a server (roles.go). Default 5; at least the voters.
	Servers int
	// DeadVoterGrace is how long a voter may be dead in gossip before the
	// leader demotes it, removes it and promotes a standby. Default 2s:
	// gossip declares a node dead only after its suspicion timeout (about
	// 3-6 s, in which a live node refutes), so the grace covers only a
	// node that gossip gave up on and that is already back (an agent
	// restarted at once); and while a dead voter stays in the
	// configuration, one more failure stops every write. A voter removed
	// too early costs little: when it returns, the leader adds it back as
	// a non-voter.
	DeadVoterGrace time.Duration
	// Raft holds raft's timings.
	Raft RaftTimings
	// WriteTimeout bounds how long a write waits for a leader. Default 10s.
	WriteTimeout time.Duration
	// PlacementModelWait bounds how long a job of a network-aware policy
	// (netload, the default, and paper) stays pending, after it is
	// submitted, while the network model does not cover the nodes it may
	// run on (leader.ModelWait), and how long `shoal alloc` waits for it:
	// right after a cluster forms, placement would choose on a few
	// measured pairs. 0 places at once. Default 45s
	// (--placement-model-wait).
	PlacementModelWait time.Duration
	// CoallocTimeout is how long every allocated node has to reserve its
	// slots before the allocation is released and the job requeued.
	// Default 10s.
	CoallocTimeout time.Duration
	// Fence bounds how long a node runs its attempts without renewing its
	// lease with the leader, and how long the leader waits after a lost
	// node's last renewal before it retries the node's attempts (agent/fence,
	// leader.FenceConfig). Default 4s lease, 5% clock rate, 1s slack;
	// --fence-lease 0 turns fencing off.
	Fence leader.FenceConfig
	// JobRetention is how long finished jobs (done, failed, killed) stay in
	// the cluster state, with their logs, before the leader purges them
	// (like Nomad's job_gc_threshold). 0 keeps them forever. Default 24h.
	JobRetention time.Duration
	// HistoryRetention is how long a purged job's record stays for
	// `shoal history` (Slurm's sacct), at most raftfsm.MaxHistoryRecords
	// of them. 0 keeps them (within that bound). Default 30 days.
	HistoryRetention time.Duration
	// Limits are the per-user limits the leader writes into raft, where
	// submit_job enforces them cluster-wide (limits.go); a zero field is no
	// limit. Default raftfsm.DefaultLimits().
	Limits raftfsm.Limits

	// PublishOutput lets every local user read every job's output through
	// the API (GET /v1/jobs/{id}/logs), as before it was the owner's. Off
	// (the default), a job's output is its owner's, root's and token
	// holders', as Slurm's output files follow their permissions. The agent
	// a user asks decides: give every agent the same. --publish-output.
	PublishOutput bool

	// Testing holds fault injections for tests; zero in production.
	Testing TestingHooks

	// HTTP bounds the API server's connections and timeouts.
	HTTP HTTPLimits

	// Gossip tunes memberlist. Name, addresses, port and key are filled in
	// from the fields above. Its Transport, when set, carries gossip
	// instead of sockets on GossipPort (an in-memory twin in tests).
	Gossip gossip.Config

	// RaftBackend gives raft its transport and stores once this agent is
	// a server. Default (nil): mutual TLS on RaftPort and boltdb under
	// DataDir/raft (raftnode.Disk). With a backend of its own (an
	// in-memory twin, as testcluster's) the agent binds no raft port and
	// advertises RaftPort as given, which must then not be 0.
	RaftBackend raftnode.Backend

	// Bin is the shoal executable the agent starts for `shoal probe KIND`,
	// hands to MPI as its remote launcher (`shoal rsh`), and starts as the
	// job helper (jobexec), as root. Default: this process's own executable
	// (/proc/self/exe for the helper). In-process tests point it at a built
	// binary. The remote launcher and the helper come from the shoal-exec
	// beside Bin instead when there is one (jobrun.ExecBin).
	Bin string

	// JobLimits are resource limits (setrlimit) every job process starts
	// with, set over the system's defaults: PID 1's limits, with at most
	// 1024 open files as the soft limit (see jobexec.SystemLimits). The
	// agent's own limits never reach jobs. --job-rlimit RES=SOFT[:HARD].
	// Default none.
	JobLimits []jobexec.Rlimit

	// NoCgroups runs jobs unconfined even where the node could put them in
	// cgroups (--cgroups=false): found by process group and environment
	// marker only, and jobs with a memory limit refused. Default false.
	NoCgroups bool

	// Sampler reads the node's dynamic state. Default: the host (gopsutil).
	// Tests inject their own to drive state changes.
	Sampler probe.Sampler
	// Probes tunes the network probes and their supervision.
	Probes probes.Config
	// Rows tunes how this node's network row reaches the servers
	// (agent/rows: --netrow-min-interval, --netrow-refresh,
	// --netrow-send-timeout); a zero field stands for rows.DefaultConfig's.
	Rows rows.Config

	// Static overrides the scanned inventory when not nil (tests: skips
	// gopsutil's slow CPU scan and makes nodes differ).
	Static *probe.Static

	// Logger receives structured logs. Default slog.Default().
	Logger *slog.Logger
}

// TestingHooks inject faults that tests cannot produce otherwise. Named
// as such so no one mistakes them for settings.
type TestingHooks struct {
	// NeverAck makes the node never acknowledge co-allocations, as a node
	// whose agent hangs would.
	NeverAck bool
	// RefusePlacement makes the leader propose, for the jobs it selects,
	// an allocation raft refuses (a host with no processes), as a
	// placement that disagrees with raft's validation would.
	RefusePlacement func(j *raftfsm.Job) bool
	// GPUDevDir is read for the GPUs' device nodes instead of /dev: a
	// directory of fake ones (made with mknod, no driver behind them) on a
	// machine without GPUs.
	GPUDevDir string
	// MIGMinorsFile is read for the driver's table of MIG capability
	// minors instead of /proc/driver/nvidia-caps/mig-minors, with
	// GPUDevDir's nvidia-caps directory for their nodes.
	MIGMinorsFile string
}

// RaftTimings are hashicorp/raft's timeouts, tuned for a LAN: a leader
// whose process dies is replaced, and the first write after it commits,
// in about one heartbeat timeout and a stagger (the leader-loss watcher,
// agent/raftnode/leaderloss.go); a leader that falls silent otherwise (a
// dead machine, a cut link) in about two. raft randomises each timeout between one and two
// times its value and sends heartbeats every tenth of the heartbeat
// timeout, so a follower starts an election only after some ten
// heartbeats in a row went missing; with pre-vote, a lone follower that
// missed them (a starved process) cannot depose a leader the others
// still hear. What deposes a leader on a starved machine is its lease: a
// leader that heard no quorum for a lease steps down, and raft caps the
// lease at the heartbeat timeout. In 10-minute soaks of five idle agents
// on a 2-core machine at load 15-30, 250 ms saw no leader change, 300 ms
// one, the former 500/500/250 ms one or two, and 200 ms two to five: 250
// ms is as quiet as longer timeouts there, and halves the failover.
// docs/results.md has the figures.
type RaftTimings struct {
	// HeartbeatTimeout: a follower without contact for this long starts an
	// election. Default 250ms (raft's default is 1s, for WANs too).
	HeartbeatTimeout time.Duration
	// ElectionTimeout: a candidate without a result for this long retries.
	// Default 250ms.
	ElectionTimeout time.Duration
	// LeaderLeaseTimeout: a leader without quorum contact for this long
	// steps down. Default 250ms, the heartbeat timeout (raft's cap): a
	// leader cut off from its followers gives up about when they start
	// electing. raft is given at most the heartbeat timeout less 1ms, so
	// that the leader-loss watcher may re-arm a follower's heartbeat check
	// (raft refuses a heartbeat timeout under the lease).
	LeaderLeaseTimeout time.Duration
	// CommitTimeout: when no new entry follows, the leader tells each
	// follower its commit index only with an append it sends after this
	// long (randomised up to twice it; raft's heartbeats carry no commit
	// index). A follower thus applies an entry 1-2 commit timeouts after
	// the leader committed it, and a launch waits on that twice when its
	// hosts follow: for place_job on the hosts and start_job on the head.
	// Default 10ms: on a 4-agent loopback cluster, a follower head began
	// the launcher a median 15 ms after start_job's commit where raft's
	// default of 50ms took 70 ms, for some 2% more of one core on the
	// leader and under 1% on each follower (docs/results.md).
	CommitTimeout time.Duration
}

// DefaultFence is the default fencing: a node runs its attempts for 4 s
// after its last renewal (renewed every second), and the leader retries a
// lost node's attempts 4 s × 1.05 + 1 s = 5.2 s after that renewal. Gossip
// takes about as long to declare a stalled node dead, so fencing adds
// little to a retry; a 20% slower clock than the leader's would go beyond
// the 5% rate and the 1 s slack together.
func DefaultFence() leader.FenceConfig {
	return leader.FenceConfig{Lease: 4 * time.Second, ClockRate: 0.05, Slack: time.Second}
}

// DefaultConfig returns production defaults.
func DefaultConfig() Config {
	return Config{
		BindAddr:           "0.0.0.0",
		GossipPort:         7946,
		RaftPort:           7947,
		HTTPPort:           7948,
		SampleInterval:     3 * time.Second,
		BootstrapExpect:    3,
		Servers:            5,
		DeadVoterGrace:     2 * time.Second,
		WriteTimeout:       10 * time.Second,
		CoallocTimeout:     10 * time.Second,
		Fence:              DefaultFence(),
		PlacementModelWait: DefaultPlacementModelWait,
		JobRetention:       24 * time.Hour,
		HistoryRetention:   30 * 24 * time.Hour,
		Limits:             raftfsm.DefaultLimits(),
		LeafTTL:            tlsca.DefaultLeafTTL,
		Raft: RaftTimings{
			HeartbeatTimeout:   250 * time.Millisecond,
			ElectionTimeout:    250 * time.Millisecond,
			LeaderLeaseTimeout: 250 * time.Millisecond,
			CommitTimeout:      10 * time.Millisecond,
		},
		HTTP:   DefaultHTTPLimits(),
		Gossip: gossip.DefaultConfig(),
		Probes: probes.DefaultConfig(),
		Rows:   rows.DefaultConfig(),
	}
}

// Validate names the first field that is wrong and how to fix it.
func (c *Config) Validate() error {
	for _, f := range c.Features {
		if err := raftfsm.CheckFeature(f); err != nil {
			return fmt.Errorf("--feature: %w", err)
		}
	}
	switch {
	case c.Name == "":
		return errors.New("name is empty: pass --name")
	case c.DataDir == "":
		return errors.New("data dir is empty: pass --data-dir DIR")
	case c.Token == "":
		return errors.New("no cluster token: create one with 'shoal keygen > token' and pass --token-file token")
	case net.ParseIP(c.BindAddr) == nil:
		return fmt.Errorf("bind address %q is not an IP address", c.BindAddr)
	case c.AdvertiseAddr != "" && net.ParseIP(c.AdvertiseAddr) == nil:
		return fmt.Errorf("advertise address %q is not an IP address", c.AdvertiseAddr)
	case c.SampleInterval < 10*time.Millisecond:
		return fmt.Errorf("sample interval %v is below 10ms", c.SampleInterval)
	case c.BootstrapExpect < 1:
		return fmt.Errorf("bootstrap-expect %d must be at least 1", c.BootstrapExpect)
	case c.Voters < 0 || (c.Voters > 0 && c.Voters < c.BootstrapExpect):
		return fmt.Errorf("voters %d must be at least bootstrap-expect %d", c.Voters, c.BootstrapExpect)
	case c.Servers < c.voters():
		return fmt.Errorf("servers %d must be at least the voter target %d (--voters, default bootstrap-expect)", c.Servers, c.voters())
	case c.DeadVoterGrace <= 0 || c.WriteTimeout <= 0 || c.CoallocTimeout <= 0:
		return errors.New("dead-voter grace, write timeout and co-allocation timeout must be positive")
	case c.Fence.Lease < 0:
		return fmt.Errorf("fence lease %v is negative: pass 0 to run attempts without fencing", c.Fence.Lease)
	case c.Fence.Lease > 0 && (c.Fence.ClockRate < 0 || c.Fence.ClockRate >= 1):
		return fmt.Errorf("fence clock rate %v: want a fraction in [0, 1), e.g. 0.05", c.Fence.ClockRate)
	case c.Fence.Lease > 0 && c.Fence.Slack < 2*fence.PollPeriod:
		return fmt.Errorf("fence slack %v: want at least %v, twice the guard's polling period", c.Fence.Slack, 2*fence.PollPeriod)
	case c.PlacementModelWait < 0:
		return fmt.Errorf("placement model wait %v is negative: pass 0 to place at once", c.PlacementModelWait)
	case c.LeafTTL < 0:
		return fmt.Errorf("leaf certificate TTL %v is negative", c.LeafTTL)
	case c.JobRetention < 0:
		return fmt.Errorf("job retention %v is negative: pass 0 to keep finished jobs forever", c.JobRetention)
	case c.HistoryRetention < 0:
		return fmt.Errorf("history retention %v is negative: pass 0 to keep job records (the newest %d)", c.HistoryRetention, raftfsm.MaxHistoryRecords)
	case c.Raft.HeartbeatTimeout < 5*time.Millisecond || c.Raft.ElectionTimeout < 5*time.Millisecond:
		return errors.New("raft heartbeat and election timeouts must be at least 5ms")
	case c.Raft.LeaderLeaseTimeout > c.Raft.HeartbeatTimeout:
		return errors.New("raft leader lease timeout must not exceed the heartbeat timeout")
	}
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("per-user limits: %w", err)
	}
	for _, l := range c.JobLimits {
		if err := l.Validate(); err != nil {
			return err
		}
	}
	if err := c.Probes.Validate(); err != nil {
		return err
	}
	if err := c.Rows.Validate(); err != nil {
		return err
	}
	if err := c.HTTP.Validate(); err != nil {
		return err
	}
	if c.Gossip.MaxInboundStreams < 1 || c.Gossip.MaxStreamsPerSource < 1 {
		return fmt.Errorf("--gossip-max-streams %d and --gossip-max-streams-per-source %d must be at least 1", c.Gossip.MaxInboundStreams, c.Gossip.MaxStreamsPerSource)
	}
	if c.Gossip.Coordinates && (c.Gossip.CoordinateMinOf < 1 || c.Gossip.CoordinateMinOf > 64) {
		return fmt.Errorf("--coordinate-min-of %d: use 1 (every ping RTT as measured) to 64", c.Gossip.CoordinateMinOf)
	}
	for _, p := range []int{c.GossipPort, c.RaftPort, c.HTTPPort} {
		if p < 0 || p > 65535 {
			return fmt.Errorf("port %d is outside 0-65535", p)
		}
	}
	if c.RaftBackend != nil && c.RaftPort == 0 {
		return errors.New("a raft backend of its own needs a raft port to advertise: set RaftPort")
	}
	if c.GossipPort != 0 && (c.GossipPort == c.RaftPort || c.GossipPort == c.HTTPPort) || c.RaftPort != 0 && c.RaftPort == c.HTTPPort {
		return fmt.Errorf("gossip, raft and http ports must differ (%d, %d, %d)", c.GossipPort, c.RaftPort, c.HTTPPort)
	}
	return nil
}

func (c *Config) voters() int {
	if c.Voters > 0 {
		return c.Voters
	}
	return c.BootstrapExpect
}

func (c *Config) advertise() string {
	if c.AdvertiseAddr != "" {
		return c.AdvertiseAddr
	}
	if ip := net.ParseIP(c.BindAddr); ip != nil && !ip.IsUnspecified() {
		return c.BindAddr
	}
	return ""
}

// DefaultPlacementModelWait is Config.PlacementModelWait's default: a
// forming ten-node cluster on declared switches has its network model in
// 3-4 rounds of bandwidth tests (6 s each by default) after the first
// cycle settles; the bound leaves room for that on a loaded host.
const DefaultPlacementModelWait = 45 * time.Second
