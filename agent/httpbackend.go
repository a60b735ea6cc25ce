package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/httpapi"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/agent/replica"
	"github.com/shoal-hpc/shoal/agent/rows"
	"github.com/shoal-hpc/shoal/elastic"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/internal/watch"
	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// httpBackend is the agent as its HTTP API sees it (httpapi.Backend): the
// components the handlers read, and the node's job and leader services.
type httpBackend struct {
	gossip *gossip.Gossip
	// srv is the agent's raft, nil on a client (roles.go).
	srv *serverRef
	fsm *raftfsm.FSM
	// stateIndex is the FSM's applied index, raised after each apply.
	stateIndex *watch.Index
	now        func() time.Time
	dataDir    string
	// writeTimeout bounds the operator's raft calls (Config.WriteTimeout).
	writeTimeout time.Duration

	applier  *applier
	peers    *peers
	elastic  *elasticSettings
	jobNode  *jobrun.Node
	progress *progressReporter
	rows     *netRows
	// feed streams the state to client agents (nil: not a server).
	feed *replica.Feed
	// modelWait is Config.PlacementModelWait, for `shoal alloc`.
	modelWait time.Duration
	// placements explains the placements this agent decided as leader.
	placements *placementLog
	// renewLease records a node's lease renewal on the leader (leases.go).
	renewLease func(ctx context.Context, node string, applied uint64, lease time.Duration) (uint64, error)
	// led is the term whose barrier this server passed as leader (readindex.go).
	led *ledTerm
}

// RenewLease records node's lease renewal; 409 on an agent that does not lead.
func (b *httpBackend) RenewLease(ctx context.Context, node string, applied uint64, lease time.Duration) (uint64, error) {
	index, err := b.renewLease(ctx, node, applied, lease)
	if err != nil {
		if errors.Is(err, ErrNotLeader) {
			return 0, httpapi.WithStatus(http.StatusConflict, err)
		}
		return 0, httpapi.WithStatus(http.StatusServiceUnavailable, err)
	}
	return index, nil
}

func (b *httpBackend) Placement(job uint64) (httpapi.Placement, bool) { return b.placements.get(job) }

var _ httpapi.Backend = (*httpBackend)(nil)

func (b *httpBackend) Nodes() []nodestate.Entry                 { return b.gossip.Nodes() }
func (b *httpBackend) Node(name string) (nodestate.Entry, bool) { return b.gossip.Node(name) }
func (b *httpBackend) Roles() map[string]string                 { return memberRoles(b.srv.raft(), b.gossip) }
func (b *httpBackend) IsLeader() bool {
	r := b.srv.raft()
	return r != nil && r.State() == raft.Leader
}
func (b *httpBackend) StateWatch() (uint64, <-chan struct{}) { return b.stateIndex.Get() }
func (b *httpBackend) NodeWatch() (uint64, <-chan struct{})  { return b.gossip.Index() }
func (b *httpBackend) State() *raftfsm.State                 { return b.fsm.State() }
func (b *httpBackend) View(f func(*raftfsm.State))           { b.fsm.View(f) }
func (b *httpBackend) ViewAt(f func(uint64, *raftfsm.State)) { b.fsm.ViewAt(f) }
func (b *httpBackend) PeerBase(node string) (string, error)  { return b.peers.addrOf(node) }
func (b *httpBackend) PeerClient(base string) *api.Client    { return b.peers.client(base) }
func (b *httpBackend) StreamClient() *http.Client            { return b.peers.stream }
func (b *httpBackend) NetServers() []string                  { return b.rows.serverNames() }

// PutNetRow keeps a row on a server; another agent, or a delta whose
// base the table does not hold, answers 409.
func (b *httpBackend) PutNetRow(r nodestate.NetRow) error {
	if err := b.rows.put(r); err != nil {
		if errors.Is(err, errNotServer) || errors.Is(err, rows.ErrNeedFull) {
			return httpapi.WithStatus(http.StatusConflict, err)
		}
		return httpapi.WithStatus(http.StatusBadRequest, err)
	}
	return nil
}

// NetRows is this server's table of rows; not ok on another agent.
func (b *httpBackend) NetRows() ([]nodestate.NetRow, bool) {
	if !b.rows.isServer() {
		return nil, false
	}
	return b.rows.table.All(), true
}

func (b *httpBackend) FeedStdin(ctx context.Context, job uint64, attempt int, r io.Reader) error {
	return b.jobNode.FeedStdin(ctx, jobrun.Key{Job: job, Attempt: attempt}, r)
}
func (b *httpBackend) LogPath(job uint64, attempt int, stream string) string {
	return filepath.Join(b.jobNode.AttemptDir(jobrun.Key{Job: job, Attempt: attempt}), stream)
}

// Leader is raft's leader on a server, the servers' gossip on a client.
func (b *httpBackend) Leader() (name, addr string) {
	r := b.srv.raft()
	if r == nil {
		return gossipLeader(b.gossip)
	}
	a, id := r.LeaderWithID()
	return string(id), string(a)
}

// server is the agent's raft, or an error saying this agent is a client.
func (b *httpBackend) server() (*raft.Raft, error) {
	if r := b.srv.raft(); r != nil {
		return r, nil
	}
	return nil, ErrClient
}

func (b *httpBackend) ConfirmLeader() error {
	r, err := b.server()
	if err != nil {
		return err
	}
	if err := r.VerifyLeader().Error(); err != nil {
		return fmt.Errorf("verify leadership: %w", err)
	}
	if err := r.Barrier(5 * time.Second).Error(); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	return nil
}

func (b *httpBackend) Apply(ctx context.Context, cmd []byte) (api.ApplyResult, error) {
	return b.applier.Apply(ctx, cmd)
}
func (b *httpBackend) ApplyLocal(ctx context.Context, cmd []byte) (api.ApplyResult, error) {
	return b.applier.applyLocal(ctx, cmd)
}

func (b *httpBackend) ModelWait(st *raftfsm.State, only []string, waited time.Duration) (string, string, bool) {
	nodes := leaderNodes(b.gossip, b.rows.leaderRow)
	now := b.now()
	cov := leader.Coverage(st, nodes, only)
	reason, wait := leader.ModelWait(func() leader.ModelCoverage { return cov }, nodes, now.Add(-waited), now, b.modelWait)
	return cov.String(), reason, wait
}

func (b *httpBackend) PlacementSnapshot(st *raftfsm.State) placement.Snapshot {
	return placementSnapshot(b.gossip, b.rows.leaderRow, st, b.now())
}

// PrepareExec is POST /v1/exec's start on this node (jobrun.Node.PrepareExec):
// an attempt that is not running here is a conflict (409).
func (b *httpBackend) PrepareExec(ctx context.Context, req api.ExecRequest) (func(context.Context, io.Writer, io.Writer) (int, error), error) {
	run, err := b.jobNode.PrepareExec(ctx, jobrun.Key{Job: req.Job, Attempt: req.Attempt}, req.Argv, req.Shell, req.Env)
	if errors.Is(err, jobrun.ErrNotRunnable) {
		return nil, httpapi.WithStatus(http.StatusConflict, err)
	}
	return run, err
}

func (b *httpBackend) ReportProgress(ctx context.Context, job uint64, attempt int, iter, total int64, comm *float64) bool {
	return b.progress.report(ctx, job, attempt, iter, total, comm)
}

// Elastic is the elastic part of `shoal job`.
func (b *httpBackend) Elastic(j *raftfsm.Job) *api.Elastic {
	sp, e := j.Spec.Elastic, j.Elastic
	if sp == nil || e == nil {
		return nil
	}
	var snapped *placement.Snapshot
	snap := func() placement.Snapshot { // only a running job's decision needs one
		if snapped == nil {
			s := placementSnapshot(b.gossip, b.rows.leaderRow, b.fsm.State(), b.now())
			snapped = &s
		}
		return *snapped
	}
	now, unit, opts := b.now(), j.Spec.Unit(), b.elastic.get()
	out := &api.Elastic{MinNP: sp.MinNP, MaxNP: sp.MaxNP, Unit: unit, BudgetNH: sp.BudgetNH, SpentNH: leader.SpentNodeHours(j, now),
		Iterations: sp.Iterations, CommHeavy: sp.CommHeavy, TargetNP: e.TargetNP, Checkpoints: e.Checkpoints,
		CheckpointDir: jobrun.CheckpointDir(b.dataDir, j), History: []api.Resize{}, RestartCostS: opts.Decision.DefaultRestartCost.Seconds()}
	if c := leader.RestartCost(e); c > 0 {
		out.RestartCostS, out.RestartKnown = c.Seconds(), true
	}
	if sp.Deadline > 0 {
		out.Deadline = httpapi.OptTime(j.SubmittedAt.Add(sp.Deadline))
	}
	for _, h := range e.History {
		out.History = append(out.History, api.Resize{At: h.At.UTC(), Attempt: h.Attempt, FromNP: h.FromNP, ToNP: h.ToNP, Reason: h.Reason})
	}
	reported := false
	for i := len(j.Attempts) - 1; i >= 0; i-- {
		if p := j.Attempts[i].Progress; p != nil {
			out.Iter, reported = p.Iter, true
			break
		}
	}
	att := j.Current()
	if att == nil {
		out.Decision = "not placed yet"
		return out
	}
	out.CurrentNP = att.NP()
	if p := att.Progress; p != nil {
		out.ResumedFrom, out.CommShare = p.FirstIter, p.Comm
		if d := p.At.Sub(p.FirstAt).Seconds(); d > 0 {
			out.Rate = float64(p.Iter-p.FirstIter) / d
		}
	}
	switch {
	case j.State == raftfsm.StateRunning && e.ResizeAttempt == att.N:
		out.ResizeRequested = true
		out.Decision = fmt.Sprintf("asked to checkpoint %s ago (SIGUSR1) for %d processes; waiting for exit 75", now.Sub(e.ResizeAt).Round(time.Second), e.TargetNP)
	case j.State == raftfsm.StateRunning:
		d := elastic.Decide(opts.Decision, leader.ElasticInput(j, att, now, snap()))
		out.Decision = d.Reason
		if !d.FinishTarget.IsZero() {
			out.Predicted = httpapi.OptTime(d.FinishTarget)
		}
	case j.State.Terminal():
		out.Decision = "ended"
	default:
		out.Decision = fmt.Sprintf("%s; next attempt on %d processes", j.State, e.TargetNP)
	}
	switch {
	case sp.Iterations <= 0:
		out.FixedSize = "the job declared no total of iterations (--iterations): it runs as a fixed-size job"
	case j.State == raftfsm.StateRunning && att.Progress == nil && !att.StartedAt.IsZero() && now.Sub(att.StartedAt) > opts.NoProgressAfter:
		out.FixedSize = fmt.Sprintf("no progress reported in the %s since attempt %d started: it runs as a fixed-size job until it reports ('shoal progress --iter K' or shoal_progress() in shoal_elastic.h)",
			now.Sub(att.StartedAt).Round(time.Second), att.N)
	case j.State.Terminal() && !reported && !att.StartedAt.IsZero():
		out.FixedSize = "the program never reported progress: it ran as a fixed-size job"
	}
	return out
}

func (b *httpBackend) Replicate(ctx context.Context, after uint64, w io.Writer, flush func()) error {
	if b.feed == nil {
		return errors.New("this agent holds no replicated state to stream: not a raft server")
	}
	return b.feed.Serve(ctx, b.fsm, after, w, flush)
}
