package httpapi

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/snapfile"
)

// Backend is what the handlers need of the agent. The agent implements it
// with an adapter over its components; nothing here reaches back into the
// agent itself.
type Backend interface {
	// Placement is why this agent, as leader, placed job's latest attempt
	// where it did; false when it decided no placement of the job.
	Placement(job uint64) (Placement, bool)

	// Nodes is every node gossip knows; Node one of them.
	Nodes() []nodestate.Entry
	Node(name string) (nodestate.Entry, bool)
	// Roles maps node names to their raft roles (leader, voter, nonvoter).
	Roles() map[string]string

	// Leader is the raft leader's name and raft address ("" when none).
	Leader() (name, addr string)
	// IsLeader says whether this agent leads; ConfirmLeader checks it with
	// the voters and applies everything committed (a consistent read).
	IsLeader() bool
	ConfirmLeader() error
	// ReadIndex is the leader's read index (api.ReadIndex): the index of
	// the state the leader had applied once a quorum confirmed that it
	// still leads, so every write acknowledged before the call is at or
	// below it. On the leader it is LocalReadIndex; elsewhere it asks the
	// leader over the peer API. LocalReadIndex refuses (409) on an agent
	// that does not lead.
	ReadIndex(ctx context.Context) (uint64, error)
	LocalReadIndex(ctx context.Context) (uint64, error)
	// Apply commits a raftfsm command, forwarding it to the leader;
	// ApplyLocal commits it here, on the leader.
	Apply(ctx context.Context, cmd []byte) (api.ApplyResult, error)
	ApplyLocal(ctx context.Context, cmd []byte) (api.ApplyResult, error)

	// StateWatch is the raft index of the replicated state this agent has
	// applied, with a channel closed when it next rises; NodeWatch is the
	// same for gossip's count of changes to the nodes it knows. Blocking
	// reads and the event stream wait on them.
	StateWatch() (uint64, <-chan struct{})
	NodeWatch() (uint64, <-chan struct{})

	// State is a copy of the replicated state; View reads it in place,
	// and ViewAt with the raft index of what it reads (which may be above
	// StateWatch's: that index is raised a moment after each apply).
	State() *raftfsm.State
	View(func(*raftfsm.State))
	ViewAt(func(index uint64, st *raftfsm.State))
	// PlacementSnapshot is the cluster as placement sees it now.
	PlacementSnapshot(*raftfsm.State) placement.Snapshot
	// ModelWait is the network model's coverage of the nodes (only those
	// named, when any) and whether a network-aware placement first asked
	// waited ago waits for it (the agent's --placement-model-wait;
	// leader.ModelWait), with the reason.
	ModelWait(st *raftfsm.State, only []string, waited time.Duration) (coverage, reason string, wait bool)
	// Elastic is the resizing view of an elastic job, nil for another.
	Elastic(j *raftfsm.Job) *api.Elastic

	// PeerBase is the API's base URL on node; PeerClient a client for it
	// (this agent's certificate authenticates); StreamClient one without
	// a timeout for logs and exec.
	PeerBase(node string) (string, error)
	PeerClient(base string) *api.Client
	StreamClient() *http.Client

	// PrepareExec readies a command of a job attempt on this node; the
	// returned function runs it, copying its output, and returns its exit
	// status. A refusal is an error WithStatus says the HTTP code of.
	PrepareExec(ctx context.Context, req api.ExecRequest) (func(ctx context.Context, stdout, stderr io.Writer) (int, error), error)
	// FeedStdin copies r into the standard input of an attempt this node
	// heads, once its launcher started.
	FeedStdin(ctx context.Context, job uint64, attempt int, r io.Reader) error
	// LogPath is where this node keeps a stream (stdout, stderr) of an attempt it heads.
	LogPath(job uint64, attempt int, stream string) string
	// ReportProgress records an attempt's reported iteration (rate-limited
	// per attempt; total is the job's iterations, 0 unknown) and says
	// whether it is being committed.
	ReportProgress(ctx context.Context, job uint64, attempt int, iter, total int64, comm *float64) bool

	// SaveSnapshot returns a snapshot file (snapfile) of the state and
	// RestoreSnapshot loads a checked one, both on the leader through
	// raft's user snapshot API.
	SaveSnapshot(ctx context.Context) ([]byte, error)
	RestoreSnapshot(ctx context.Context, h snapfile.Header, payload []byte) error
	// RaftPeers is raft's configuration; RemovePeer (on the leader) drops
	// a server from it.
	RaftPeers() ([]api.RaftPeer, error)
	RemovePeer(ctx context.Context, id string) error

	// PutNetRow keeps a node's network row in this server's table (POST
	// /v1/netrow); an agent that is not a server refuses (409 unless the
	// error says otherwise, WithStatus). NetRows is the table, ok false on
	// an agent that is not a server; NetServers names the servers a
	// client forwards GET /v1/net to.
	PutNetRow(r nodestate.NetRow) error
	NetRows() (rows []nodestate.NetRow, ok bool)
	NetServers() []string

	// RenewLease records, on the leader, that node renewed its lease
	// (POST /v1/lease), once the voters confirm that this agent still
	// leads; elsewhere it refuses (409 unless the error says otherwise).
	// applied is the raft index the node's state had applied, lease the
	// lease it runs under. It returns the index this agent's state had
	// applied once it recorded the renewal (api.LeaseGrant).
	RenewLease(ctx context.Context, node string, applied uint64, lease time.Duration) (uint64, error)

	// Replicate streams the replicated state to a client agent from
	// after on (agent/replica's Feed.Serve), calling flush after each
	// burst, until ctx ends; an error before the first write means this
	// agent cannot serve the stream (it is not a server).
	Replicate(ctx context.Context, after uint64, w io.Writer, flush func()) error
}

// statusError is an error with the HTTP status it should be answered with.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// WithStatus marks err to be answered with the HTTP status code.
func WithStatus(code int, err error) error { return &statusError{code: code, err: err} }
