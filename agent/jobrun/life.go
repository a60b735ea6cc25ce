package jobrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// An agent's life runs from one start to its stop. The processes of a life die with it (the
// job loop kills them on stop, Pdeathsig on a crash), but for the attempts that run under
// supervisors, which the next life adopts (adopt.go), so an attempt this node joined in an
// earlier life is over here, whatever the replicated state still says: a restart is faster
// than gossip's failure detector, and a restarted head would otherwise launch the attempt a
// second time under the same number. Before this node reserves, launches or runs anything, it
// commits node_restarted, which fails those attempts with retry, and waits to see it applied.
type life struct {
	// boot names this life; GET /v1/health reports it, so a head sees that a node of its
	// attempt restarted even when the node answers again before the head asks.
	boot string
	// settled is closed once node_restarted is committed and applied here.
	settled chan struct{}
}

func newLife() life {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return life{boot: hex.EncodeToString(b), settled: make(chan struct{})}
}

// settleLastLife commits node_restarted for this node, retrying until it is committed or ctx
// ends, and waits until the local FSM has applied it. It reports whether the node may act.
// Adopted are the attempts whose supervisors outlived the last life (adopt.go): they stay running.
func (n *Node) settleLastLife(ctx context.Context, adopted []raftfsm.AttemptRef) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		b, err := raftfsm.Encode(raftfsm.CmdNodeRestarted, n.now(), raftfsm.NodeRestarted{Node: n.cfg.Name, Adopted: adopted})
		if err != nil {
			n.log.Error("encode node_restarted", "err", err)
			return false
		}
		res, err := n.d.Propose(ctx, b)
		var se *api.StatusError
		switch {
		case err == nil && res.Err != "":
			n.log.Warn("node_restarted refused; attempts of the last life are left to the failure detector", "err", res.Err)
		case errors.As(err, &se) && se.Code == http.StatusBadRequest:
			// An older leader that does not know the command: keep the old behaviour rather than
			// never running a job here. (A 401 or 403, e.g. during a CA rotation, is retried.)
			n.log.Error("node_restarted refused by the leader; attempts of the last life are left to the failure detector", "err", err)
			close(n.life.settled)
			return true
		case err != nil && ctx.Err() != nil:
			return false // stopping
		case err != nil:
			n.log.Warn("commit node_restarted, retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for n.d.State.Index() < res.Index {
			select {
			case <-ctx.Done():
				return false
			case <-tick.C:
			case <-n.d.Applied:
			}
		}
		n.log.Info("attempts of the last life settled", "boot", n.life.boot, "index", res.Index)
		close(n.life.settled)
		return true
	}
	return false
}

// runnableInThisLife is runnable once this life has settled: until then an attempt the state
// shows running here may be one of the last life, about to be failed.
func (n *Node) runnableInThisLife(k Key) (*raftfsm.Job, error) {
	select {
	case <-n.life.settled:
		return n.runnable(k)
	default:
		return nil, fmt.Errorf("agent %s has just started and is still failing the attempts of its last life", n.cfg.Name)
	}
}

// hostBoots asks every node of an attempt for its boot ID (empty where it does not answer).
func (n *Node) hostBoots(ctx context.Context, att *raftfsm.Attempt) map[string]string {
	var mu sync.Mutex
	out := map[string]string{}
	var wg sync.WaitGroup
	for _, h := range att.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			boot := n.bootOf(ctx, h.Node)
			mu.Lock()
			out[h.Node] = boot
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (n *Node) bootOf(ctx context.Context, node string) string {
	if node == n.cfg.Name {
		return n.life.boot
	}
	base, err := n.d.HTTPAddrOf(node)
	if err != nil {
		return ""
	}
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	h, err := n.d.PeerClient(base).Health(hctx)
	if err != nil {
		return ""
	}
	return h.Boot
}

// restartedHosts lists the nodes whose boot ID is known from before the launch and differs now:
// they restarted under the attempt, and their processes with them.
func (n *Node) restartedHosts(ctx context.Context, before map[string]string) []string {
	return restarted(before, func(node string) string { return n.bootOf(ctx, node) })
}

// restarted lists, sorted, the nodes of before whose boot ID now differs from the one recorded.
// A node that did not answer, then or now, is not counted: unreachable nodes are judged apart.
func restarted(before map[string]string, now func(node string) string) []string {
	var out []string
	for node, boot := range before {
		if boot == "" {
			continue
		}
		if b := now(node); b != "" && b != boot {
			out = append(out, node)
		}
	}
	slices.Sort(out)
	return out
}
