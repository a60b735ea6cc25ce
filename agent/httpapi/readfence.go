package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// Reads are answered from this agent's own copy of the replicated state,
// which may be behind the leader's: a follower a few entries behind, a
// server re-added and replaying the log, a client agent following a
// server. Three fences keep such a copy from answering "no job N" for a
// job the cluster has, or an older state than the reader has seen:
//
//   - a miss: a job ID at or beyond what this copy has assigned is looked
//     up again once the copy has reached the leader's read index, so a 404
//     means the job does not exist;
//   - ?consistent: every read it marks waits for the read index first;
//   - ?min_index=N: the read waits for this copy to apply N, the index a
//     write answered with (api.IndexHeader).
//
// Each wait is bounded by fenceBound; a copy that cannot catch up in time
// answers 503, which sends the CLI to another agent, rather than an
// answer it cannot vouch for. A hit costs nothing: the read index, one
// round of heartbeats on the leader, is asked for only on a miss or when
// the read asks for it.

// fenceBound is how long a read may wait for this agent's copy to catch
// up: two thirds of the request timeout, leaving the rest to answer.
func (s *Server) fenceBound() time.Duration { return s.cfg.HTTP.RequestTimeout * 2 / 3 }

// writeContext bounds a write's wait for a leader the same way, whatever
// WriteTimeout allows: an answer written after the connection's deadline
// reaches nobody. Over TLS it is worse than silence: the record that could
// not be sent still used up its sequence number, so the close_notify that
// follows fails the client's check and it reports "bad record MAC", not
// the 503 that would send it to another agent.
func (s *Server) writeContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.fenceBound())
}

// fenceRetry bounds the pause between two asks of the read index while
// there is no leader to answer (an election, a node cut off).
const fenceRetry = 500 * time.Millisecond

// handleReadIndex serves GET /v1/read-index on the leader (api.ReadIndex);
// another agent answers 409, and a leader a quorum no longer follows 503.
func (s *Server) handleReadIndex(w http.ResponseWriter, r *http.Request) {
	idx, err := s.be.LocalReadIndex(r.Context())
	if err != nil {
		writeErr(w, statusOf(err, http.StatusServiceUnavailable), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, api.ReadIndex{Index: idx})
}

// catchUp returns once this agent's state has applied index, or an
// error saying how far behind it is when ctx ends first.
func (s *Server) catchUp(ctx context.Context, index uint64) error {
	for {
		i, changed := s.be.StateWatch()
		if i >= index {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			i, _ := s.be.StateWatch()
			return fmt.Errorf("this agent's copy of the cluster state is at index %d, short of %d after %v", i, index, s.fenceBound())
		}
	}
}

// fence returns once this agent's state holds every write acknowledged
// before it was called: it learns the leader's read index, asking again
// while no leader answers, and waits for its own copy to apply it.
func (s *Server) fence(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.fenceBound())
	defer cancel()
	pause := 20 * time.Millisecond
	for {
		idx, err := s.be.ReadIndex(ctx)
		if err == nil {
			return s.catchUp(ctx, idx)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("learn the leader's read index: %w", err)
		}
		pause = min(2*pause, fenceRetry)
	}
}

// readFences applies a read's ?min_index= and ?consistent before it reads
// this agent's state. It answers a bad query (400) or a copy that could
// not catch up in time (503) itself and returns false.
func (s *Server) readFences(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	if raw := q.Get(api.MinIndexParam); raw != "" {
		want, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("%s=%q is not an index: pass the %s header of a write's answer", api.MinIndexParam, raw, api.IndexHeader))
			return false
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.fenceBound())
		err = s.catchUp(ctx, want)
		cancel()
		if err != nil {
			writeBehind(w, err)
			return false
		}
	}
	if q.Get(api.ConsistentParam) != "" {
		if err := s.fence(r.Context()); err != nil {
			writeBehind(w, err)
			return false
		}
	}
	return true
}

// writeBehind answers a read this agent cannot serve current: 503, which
// the CLI takes as a cue to ask another agent.
func writeBehind(w http.ResponseWriter, err error) {
	writeErr(w, http.StatusServiceUnavailable, "this agent cannot serve the read current ("+err.Error()+
		"): ask another agent (shoal members lists them; --addr picks one)")
}
