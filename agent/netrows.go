package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/agent/rows"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

// errNotServer answers a row or a matrix read sent to an agent that is
// not a server (C2: Raft.Member false).
var errNotServer = errors.New("this agent is not a server: network rows go to the servers")

// netRows is this node's side of the network rows (agent/rows): the row
// table it holds as a server, from which the leader core and GET /v1/net
// read the matrix, and the sender of its own row, which the probes set.
type netRows struct {
	self   string
	table  *rows.Table
	sender *rows.Sender
	gossip *gossip.Gossip
	peers  *peers
	now    func() time.Time
	cfg    rows.Config
	log    *slog.Logger
}

func newNetRows(cfg rows.Config, self string, g *gossip.Gossip, p *peers, now func() time.Time, log *slog.Logger) *netRows {
	r := &netRows{self: self, table: rows.NewTable(), gossip: g, peers: p, now: now, cfg: cfg.OrDefault(), log: log}
	r.sender = rows.NewSender(rows.Deps{Config: cfg, Node: self, Boot: g.Self().Boot, Servers: r.servers, Send: r.send, Now: now, Log: log})
	return r
}

// servers are the alive gossip nodes with Raft.Member (C2), this one too
// when it is a server.
func (r *netRows) servers() []rows.Server {
	var out []rows.Server
	for _, e := range r.gossip.Nodes() {
		if e.HasState && e.State.Raft.Member && (e.Status == nodestate.StatusAlive || e.State.Name == r.self) {
			out = append(out, rows.Server{Name: e.State.Name, Boot: e.State.Boot})
		}
	}
	return out
}

// isServer says whether this agent holds the matrix.
func (r *netRows) isServer() bool { return r.gossip.Self().Raft.Member }

// send delivers this node's encoded row to a server: into its own table
// when it is one, else POST /v1/netrow over the agents' mutual TLS.
func (r *netRows) send(ctx context.Context, server string, body []byte) error {
	if server == r.self {
		row, err := nodestate.DecodeNetRow(body)
		if err != nil {
			return err
		}
		return r.put(row)
	}
	base, err := r.peers.addrOf(server)
	if err != nil {
		return err
	}
	if err := r.peers.client(base).Do(ctx, http.MethodPost, "/v1/netrow", body, nil); err != nil {
		return fmt.Errorf("send network row to %s: %w", server, err)
	}
	return nil
}

// put keeps a row another node (or this one) sent, on a server.
func (r *netRows) put(row nodestate.NetRow) error {
	if !r.isServer() {
		return errNotServer
	}
	_, err := r.table.Put(row, r.now())
	return err
}

// leaderRow is a copy of the cells the table holds for a node of that
// boot (nil when none), for the leader core: read in place, the row is
// copied once.
func (r *netRows) leaderRow(node string, boot int64) []nodestate.NetEntry {
	var out []nodestate.NetEntry
	r.table.Read(node, func(row nodestate.NetRow) {
		if row.Boot == boot && len(row.Cells) > 0 {
			out = slices.Clone(row.Cells)
		}
	})
	return out
}

// prune drops from the table the rows of nodes gossip says are gone,
// every 5 MinIntervals until ctx ends (the sender runs beside it).
func (r *netRows) prune(ctx context.Context) {
	t := time.NewTicker(r.cfg.MinInterval * 5)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if gone := r.table.Prune(r.now(), r.gossip.Nodes(), 3*r.cfg.Refresh); len(gone) > 0 {
			r.log.Debug("dropped network rows of nodes gone", "nodes", gone)
		}
	}
}

// serverNames lists the servers by name, for forwarding reads.
func (r *netRows) serverNames() []string {
	var out []string
	for _, s := range r.servers() {
		if s.Name != r.self {
			out = append(out, s.Name)
		}
	}
	return out
}

// PlacementSnapshot is placement's input as the leader core would read
// it on this node now: gossip's nodes with the rows this server holds.
func (a *Agent) PlacementSnapshot() placement.Snapshot {
	return placementSnapshot(a.gossip, a.rows.leaderRow, a.fsm.State(), a.clock())
}

// NetRows is the table of network rows this node holds (empty on an
// agent that is not a server).
func (a *Agent) NetRows() []nodestate.NetRow { return a.rows.table.All() }

// OwnNetRow is this node's own network row (V 0: none yet).
func (a *Agent) OwnNetRow() nodestate.NetRow { return a.rows.sender.Row() }

// NetRowsSent is how many rows this node delivered to other servers and
// their encoded bytes, since it started.
func (a *Agent) NetRowsSent() (sends, bytes uint64) {
	return a.rows.sender.Sends(), a.rows.sender.SentBytes()
}
