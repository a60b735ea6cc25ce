package jobrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Config is what a Node is: which node, where its files go, what its job
// processes are told. The agent fills it from its own configuration.
type Config struct {
	// Name is this node's name, as the replicated state holds it. Required.
	Name string
	// DataDir holds the attempts' logs (DataDir/jobs/ID/N) and, for an
	// elastic job without a working directory, its checkpoints. Required.
	DataDir string
	// Bin is the shoal executable, handed to MPI as its remote launcher
	// (`shoal rsh`) and started as the job helper (jobexec). Default "":
	// this process's own executable.
	Bin string
	// Exec is the binary the job helper is started from and MPI launchers
	// run as their remote shell (`shoal-exec rsh`, or `shoal rsh`).
	// Default "": ExecBin(Bin).
	Exec string
	// LocalAddr is the agent's API as processes on this node reach it
	// (SHOAL_AGENT_ADDR), e.g. "https://127.0.0.1:7948". Required.
	LocalAddr string
	// Socket is the agent's local socket (SHOAL_AGENT_SOCK); "" when off.
	Socket string
	// CAFile is the public CA file jobs verify the agent with (SHOAL_CA_FILE).
	CAFile string
	// CACerts is the same certificates as base64 of the PEM (SHOAL_CA_CERTS).
	CACerts string
	// JobLimits are the site's resource limits over the system's defaults
	// (--job-rlimit); see jobLimitsFor. Default none.
	JobLimits []jobexec.Rlimit
	// Cgroups confines the node's jobs (OpenCgroups); nil runs them
	// unconfined, found by process group and the environment marker only,
	// and refuses jobs with a memory limit.
	Cgroups *confine.Manager
	// CgroupsOff is why Cgroups is nil (OpenCgroups' error), for the
	// refusal and `shoal nodes`.
	CgroupsOff string
	// GPUs is how many GPUs the node has (its inventory's gpu PEs), which
	// it binds to the attempts that ask for them (gpus.go); 0 binds none.
	GPUs int
	// CUDAIDs name the node's GPUs by index in CUDA_VISIBLE_DEVICES
	// (probe.CUDADeviceIDs: the UUIDs of a node with MIG instances, which
	// CUDA takes by UUID only); nil names them by their indices.
	CUDAIDs []string
	// GPUDevices are the device nodes each of the node's GPUs needs, by
	// index (as many as GPUs, then possibly one more entry of nodes no
	// GPU of the inventory needs, which no attempt holds): a whole GPU its
	// /dev/nvidiaN or render node, a MIG instance its GPU's node and its
	// capability nodes. An
	// attempt's cgroup denies those of the GPUs it does not hold
	// (confine.DenyOthers). nil leaves every device open to every job,
	// bound by its environment only (no devices controller or BPF device
	// programs, or a /dev that does not match the inventory).
	GPUDevices [][]confine.Device
	// NeverAck makes the node never acknowledge co-allocations, as a node
	// whose agent hangs would (a fault injection for tests).
	NeverAck bool
	// Lease is how long one renewal with the leader lets this node run
	// its attempts (fence.go, leader.FenceConfig.Lease); 0 turns fencing
	// off.
	Lease time.Duration
}

// Validate names the first field that is missing.
func (c *Config) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("jobrun: node name is empty")
	case c.DataDir == "":
		return errors.New("jobrun: data dir is empty")
	case c.LocalAddr == "":
		return errors.New("jobrun: the agent's local API address is empty")
	case c.Lease < 0:
		return fmt.Errorf("jobrun: lease %v is negative: pass 0 to run without fencing", c.Lease)
	}
	for _, l := range c.JobLimits {
		if err := l.Validate(); err != nil {
			return fmt.Errorf("jobrun: %w", err)
		}
	}
	return nil
}

// StateReader is this node's copy of the replicated state (*raftfsm.FSM).
// View must not be held across anything that blocks.
type StateReader interface {
	View(fn func(*raftfsm.State))
	State() *raftfsm.State
	Index() uint64
	// Changed is closed once the next entry is applied here.
	Changed() <-chan struct{}
}

var _ StateReader = (*raftfsm.FSM)(nil)

// Deps are what a Node needs from the rest of the agent, each as small as
// the Node uses it. Every field is required.
type Deps struct {
	Log *slog.Logger
	// Now is the clock every timestamp and age is read from.
	Now func() time.Time
	// State reads the replicated state as applied here.
	State StateReader
	// Applied is signalled after every applied raft entry; the reconciler
	// wakes on it rather than waiting for its tick.
	Applied <-chan struct{}
	// Propose commits a raft command through the leader (encoded with
	// raftfsm.Encode) and returns its result. It blocks until then or ctx ends.
	Propose func(ctx context.Context, cmd []byte) (api.ApplyResult, error)
	// HTTPAddrOf is a node's API base URL as gossip knows it.
	HTTPAddrOf func(node string) (string, error)
	// PeerClient is a client for another agent's API (mutual TLS, a timeout).
	PeerClient func(base string) *api.Client
	// StreamClient reaches other agents for streams that last as long as
	// their job (exec): no timeout.
	StreamClient *http.Client
	// NodeStatus is a node's gossip status ("alive", "suspect", "dead",
	// "left") and whether gossip knows the node.
	NodeStatus func(node string) (status string, known bool)
	// JobCapability is the capability of an attempt, handed to its
	// processes in a file only the owner reads (SHOAL_JOB_CAP_FILE, for
	// `shoal rsh` and `shoal progress`; capfile.go).
	JobCapability func(*raftfsm.Job, *raftfsm.Attempt) string
	// MayRunAs is nil when this node may start a process as owner, or
	// why not (an agent that is not root runs only its own user's jobs).
	MayRunAs func(owner string) error
	// ResizeSignalEvery is how often SIGUSR1 is sent again to an attempt
	// asked to resize (the agent's elastic options, which tests change).
	ResizeSignalEvery func() time.Duration
	// Prune drops the agent's own per-attempt bookkeeping of ended
	// attempts; it runs with the Node's pruning, every few seconds.
	Prune func()
	// Settle waits, up to ctx's end, for the agent's own commits about
	// an attempt that are under way (progress reports), before the
	// attempt's outcome is proposed: a report sent just before the
	// program exited must not be overtaken by the attempt's end.
	Settle func(ctx context.Context, k Key)
	// RenewLease renews this node's lease with the leader; it returns
	// once the leader, confirmed by a quorum, has recorded the renewal,
	// with the index the leader's state had applied then (0: not said).
	// Optional: nil turns fencing off.
	RenewLease func(ctx context.Context) (uint64, error)
}

func (d *Deps) validate() error {
	if d.Log == nil || d.Now == nil || d.State == nil || d.Applied == nil || d.Propose == nil ||
		d.HTTPAddrOf == nil || d.PeerClient == nil || d.StreamClient == nil || d.NodeStatus == nil ||
		d.JobCapability == nil || d.MayRunAs == nil || d.ResizeSignalEvery == nil || d.Prune == nil || d.Settle == nil {
		return errors.New("jobrun: every dependency is required")
	}
	return nil
}

// Node is the node side of jobs on one agent: the reconciler that makes
// this node match the replicated state, the launcher of the attempts it
// heads, the executor of job processes, and their bookkeeping.
type Node struct {
	cfg Config
	d   Deps
	log *slog.Logger
	now func() time.Time
	// after is the timer of waits that recheck a condition no raft entry
	// announces (time.After; tests replace it).
	after func(time.Duration) <-chan time.Time

	procs *procTable
	// cgroups are the attempts' cgroups on this node (cgroups.go).
	cgroups cgroupTable
	// warm are the attempts' job helpers started ahead of their command (warm.go).
	warm warmTable
	// life is this run of the agent (life.go): nothing of a job starts here before it settles.
	life life
	// jobLimits are the limits the job helper sets for every job process.
	jobLimits []jobexec.Rlimit
	// tmpTag names this agent's attempt directories in the temporary
	// directory (tmpdirs.go).
	tmpTag string

	mu       sync.Mutex
	launched map[Key]bool      // attempts whose launcher this node (as head) started
	acking   map[Key]time.Time // reservations acknowledged, and when (re-sent if raft lost it)
	ompiDirs map[Key]ompiDir   // Open MPI session directory bases of attempts (ompi.go)
	// caps are the attempts' capability files on this node (capfile.go).
	caps capFiles
	// signalled is when SIGUSR1 last went to an attempt asked to resize (elastic_signal.go).
	signalled map[Key]time.Time
	// stdin holds the write end of rank 0's standard input of attempts
	// started by `shoal run`, until the client sends it (stdin.go).
	stdin map[Key]*stdinSlot
	// lastSweep is when stray processes were last looked for (sweep.go),
	// by the upkeep that runs beside the reconciler while upkeep is set.
	lastSweep time.Time
	upkeep    atomic.Bool
	// lease is this node's lease with the leader (fence.go).
	lease leaseState
	// supervised are the process groups of the attempts that run under
	// supervisors (supervised.go), started in this life or adopted.
	supervised map[Key]int
	// leaving makes Run's end leave the supervised attempts running
	// (LeaveRunning).
	leaving atomic.Bool

	// wg holds the launchers and acknowledgements Run started; Run waits for them.
	wg sync.WaitGroup
}

// New checks cfg and deps and returns a Node that does nothing until Run.
func New(cfg Config, deps Deps) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := deps.validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, d: deps, log: deps.Log, now: deps.Now, after: time.After, procs: newProcTable(deps.Now), life: newLife(),
		cgroups:  cgroupTable{live: map[Key]*attemptCgroup{}},
		warm:     warmTable{m: map[Key][]warmHelper{}, running: map[Key]time.Time{}},
		launched: map[Key]bool{}, acking: map[Key]time.Time{}, ompiDirs: map[Key]ompiDir{}, signalled: map[Key]time.Time{}, stdin: map[Key]*stdinSlot{},
		supervised: map[Key]int{},
		tmpTag:     tempTag(cfg.DataDir)}
	if n.cfg.Exec == "" {
		var err error
		if n.cfg.Exec, err = ExecBin(cfg.Bin); err != nil {
			n.log.Warn("not starting jobs through the small job-start binary", "err", err)
		}
	}
	n.initJobLimits()
	return n, nil
}

// Boot names this life of the node; GET /v1/health reports it, so a head
// sees that a node of its attempt restarted.
func (n *Node) Boot() string { return n.life.boot }

// PIDs lists the process-group leaders this node runs for a job, any
// attempt.
func (n *Node) PIDs(job uint64) []int {
	var out []int
	for _, k := range n.procs.keys() {
		if k.Job == job {
			out = append(out, n.procs.pids(k)...)
		}
	}
	return out
}

// Fence records that this node has seen attempt k and fails if a newer
// attempt of the job was seen: nothing older may run here from now on.
func (n *Node) Fence(k Key) error { return n.procs.fence(k) }
