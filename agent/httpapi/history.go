package httpapi

import (
	"net/http"
	"slices"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// handleHistory lists finished jobs by ID, the purged ones from their
// history records (`shoal history`). ?user= keeps one owner's.
func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	if !s.blockState(w, r) {
		return
	}
	user := r.URL.Query().Get("user")
	out := []api.HistoryRecord{}
	s.be.View(func(st *raftfsm.State) {
		for _, h := range st.History {
			if user == "" || h.Owner == user {
				out = append(out, toAPIHistory(h, true))
			}
		}
		for _, j := range st.Jobs {
			if j.State.Finished() && (user == "" || j.Owner == user) {
				out = append(out, toAPIHistory(raftfsm.Record(j), false))
			}
		}
	})
	slices.SortFunc(out, func(a, b api.HistoryRecord) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	writeJSON(w, http.StatusOK, out)
}

func toAPIHistory(h raftfsm.HistoryRecord, purged bool) api.HistoryRecord {
	out := api.HistoryRecord{ID: h.ID, Owner: h.Owner, Cmd: h.Cmd, NP: h.NP, Nodes: h.Nodes, State: string(h.State),
		ExitCode: h.ExitCode, Reason: h.Reason, Attempts: h.Attempts, Purged: purged, SubmittedAt: h.SubmittedAt.UTC(),
		StartedAt: OptTime(h.StartedAt), EndedAt: h.EndedAt.UTC()}
	if out.Cmd == nil {
		out.Cmd = []string{}
	}
	if out.Nodes == nil {
		out.Nodes = []string{}
	}
	if h.Usage != nil {
		out.Usage = &api.Usage{CPUSeconds: h.Usage.CPUSeconds, MaxRSSBytes: h.Usage.MaxRSSBytes}
	}
	return out
}
