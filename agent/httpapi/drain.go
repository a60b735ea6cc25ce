package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// handleDrain takes a node out of service (raft's drain_node). Only
// administrators may: a drain moves everyone's jobs.
func (s *Server) handleDrain(w http.ResponseWriter, r *http.Request) {
	node, ok := s.adminNode(w, r, "drain")
	if !ok {
		return
	}
	var body api.DrainRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		writeErr(w, http.StatusBadRequest, "drain takes {\"deadline\": DURATION}: "+err.Error())
		return
	}
	if _, known := s.be.Node(node); !known {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("no node %q in this cluster (see 'shoal nodes')", node))
		return
	}
	var deadline time.Duration
	if body.Deadline != "" {
		d, err := time.ParseDuration(body.Deadline)
		if err != nil || d <= 0 || d > raftfsm.MaxDrainDeadline {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("deadline %q: want a duration such as 30m or 2h, above 0 and at most %v", body.Deadline, raftfsm.MaxDrainDeadline))
			return
		}
		deadline = d
	}
	b, _ := raftfsm.Encode(raftfsm.CmdDrainNode, s.now(), raftfsm.DrainNode{Node: node, Deadline: deadline})
	s.applyAndAnswer(w, r, b, func(api.ApplyResult) any { return s.drainStatus(node) })
}

// handleUndrain returns a node to service. A node gossip forgot may
// still be undrained (it left while drained).
func (s *Server) handleUndrain(w http.ResponseWriter, r *http.Request) {
	node, ok := s.adminNode(w, r, "undrain")
	if !ok {
		return
	}
	drained := false
	s.be.View(func(st *raftfsm.State) { _, drained = st.Drained(node) })
	if _, known := s.be.Node(node); !known && !drained {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("no node %q in this cluster (see 'shoal nodes')", node))
		return
	}
	b, _ := raftfsm.Encode(raftfsm.CmdUndrainNode, s.now(), raftfsm.UndrainNode{Node: node})
	s.applyAndAnswer(w, r, b, func(api.ApplyResult) any { return s.drainStatus(node) })
}

// adminNode refuses a request that is not an administrator's and returns
// the node named in the path.
func (s *Server) adminNode(w http.ResponseWriter, r *http.Request, verb string) (string, bool) {
	if !privileged(r) {
		p, _ := peerOf(r)
		writeErr(w, http.StatusForbidden, fmt.Sprintf("%s needs root or the cluster token; you are uid %d", verb, p.uid))
		return "", false
	}
	node := r.PathValue("name")
	if node == "" {
		writeErr(w, http.StatusBadRequest, verb+" needs a node name")
		return "", false
	}
	return node, true
}

// drainStatus reads a node's drain from this agent's state: after an
// apply through this agent it includes the command (applied locally
// before the answer, or forwarded and read a moment later).
func (s *Server) drainStatus(node string) api.DrainStatus {
	out := api.DrainStatus{Node: node}
	s.be.View(func(st *raftfsm.State) {
		out.Drain = raftfsm.DrainState(st, node)
		if d, ok := st.Drained(node); ok {
			out.Deadline = OptTime(d.Deadline)
		}
	})
	return out
}

// withDrains fills the drain of each node from the replicated state.
func (s *Server) withDrains(ns []api.Node) {
	s.be.View(func(st *raftfsm.State) {
		for i := range ns {
			ns[i].Drain = raftfsm.DrainState(st, ns[i].Name)
			withInferredSwitch(&ns[i], st)
			if d, ok := st.Drained(ns[i].Name); ok {
				ns[i].DrainDeadline = OptTime(d.Deadline)
			}
		}
	})
}

// withInferredSwitch gives a node that declares no switch the one the
// leader inferred (raft's set_switches); a declared switch wins.
func withInferredSwitch(n *api.Node, st *raftfsm.State) {
	if sw := st.InferredSwitch(n.Name); n.Switch == "" && sw != "" {
		n.Switch, n.SwitchInferred = sw, true
	}
}
