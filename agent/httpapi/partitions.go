package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// handlePartitions lists the partitions by name (GET /v1/partitions).
func (s *Server) handlePartitions(w http.ResponseWriter, _ *http.Request) {
	out := []api.Partition{}
	s.be.View(func(st *raftfsm.State) {
		for _, name := range slices.Sorted(maps.Keys(st.Partitions)) {
			out = append(out, toAPIPartition(st.Partitions[name]))
		}
	})
	writeJSON(w, http.StatusOK, out)
}

// handleSetPartition creates or replaces a partition (POST
// /v1/partitions); root or a token holder only. Its nodes may be given
// as host lists (n[01-04]).
func (s *Server) handleSetPartition(w http.ResponseWriter, r *http.Request) {
	if !privileged(r) {
		p, _ := peerOf(r)
		writeErr(w, http.StatusForbidden, fmt.Sprintf("setting a partition needs root or the cluster token; you are uid %d", p.uid))
		return
	}
	var body api.PartitionRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		writeErr(w, http.StatusBadRequest, "a partition is {\"user\": NAME, \"partition\": {\"name\": ..., \"nodes\": [...], ...}}: "+err.Error())
		return
	}
	p := body.Partition
	var nodes []string
	for _, l := range p.Nodes {
		hs, err := jobfmt.ExpandHosts(l)
		if err != nil {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("partition %s: nodes %q: %v", p.Name, l, err))
			return
		}
		nodes = append(nodes, hs...)
	}
	slices.Sort(nodes)
	b, _ := raftfsm.Encode(raftfsm.CmdSetPartition, s.now(), raftfsm.SetPartition{User: raftfsm.RootUser, Partition: raftfsm.Partition{
		Name: p.Name, Nodes: slices.Compact(nodes), Default: p.Default, MaxTime: p.MaxTime, DefaultTime: p.DefaultTime,
		MaxNodes: p.MaxNodes, AllowUsers: p.AllowUsers, NoOversubscribe: p.NoOversubscribe, LoadThreshold: p.LoadThreshold}})
	s.applyAndAnswer(w, r, b, func(api.ApplyResult) any { return s.partition(p.Name) })
}

// handleDeletePartition removes a partition no live job is in (POST
// /v1/partitions/{name}/delete); root or a token holder only.
func (s *Server) handleDeletePartition(w http.ResponseWriter, r *http.Request) {
	if !privileged(r) {
		p, _ := peerOf(r)
		writeErr(w, http.StatusForbidden, fmt.Sprintf("deleting a partition needs root or the cluster token; you are uid %d", p.uid))
		return
	}
	name := r.PathValue("name")
	b, _ := raftfsm.Encode(raftfsm.CmdDelPartition, s.now(), raftfsm.DeletePartition{User: raftfsm.RootUser, Name: name})
	s.applyAndAnswer(w, r, b, func(api.ApplyResult) any { return api.Partition{Name: name} })
}

func (s *Server) partition(name string) api.Partition {
	var out api.Partition
	s.be.View(func(st *raftfsm.State) { out = toAPIPartition(st.Partitions[name]) })
	return out
}

func toAPIPartition(p raftfsm.Partition) api.Partition {
	return api.Partition{Name: p.Name, Nodes: append([]string{}, p.Nodes...), Default: p.Default, MaxTime: p.MaxTime,
		DefaultTime: p.DefaultTime, MaxNodes: p.MaxNodes, AllowUsers: append([]string{}, p.AllowUsers...),
		NoOversubscribe: p.NoOversubscribe, LoadThreshold: p.LoadThreshold}
}
