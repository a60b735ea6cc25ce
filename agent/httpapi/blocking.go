package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/events"
)

// block is the blocking part of a read (Consul's and Nomad's blocking
// queries): with ?index=N it waits until watch's index is above N, or
// ?wait=D passes (api.DefaultWait, at most api.MaxWait), or the client
// leaves; then, and for every read without ?index, it sets
// api.IndexHeader to the index the answer reflects. It answers a bad
// query itself and returns false.
func (s *Server) block(w http.ResponseWriter, r *http.Request, watch func() (uint64, <-chan struct{})) bool {
	return s.blockUntil(w, r, watch, func(done <-chan struct{}, wait time.Duration, after uint64) {
		waitAbove(done, wait, after, watch)
	})
}

// blockUntil is block with its own wait: until returns when what the read
// answers has moved past after (or wait passes, or done closes).
func (s *Server) blockUntil(w http.ResponseWriter, r *http.Request, watch func() (uint64, <-chan struct{}),
	until func(done <-chan struct{}, wait time.Duration, after uint64)) bool {
	q := r.URL.Query()
	idx, _ := watch()
	if raw := q.Get("index"); raw != "" {
		after, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("index=%q is not an index: pass the %s header of the last answer", raw, api.IndexHeader))
			return false
		}
		wait := api.DefaultWait
		if raw := q.Get("wait"); raw != "" {
			if wait, err = time.ParseDuration(raw); err != nil || wait <= 0 {
				writeErr(w, http.StatusBadRequest, fmt.Sprintf("wait=%q is not a positive duration: give e.g. wait=30s or wait=5m", raw))
				return false
			}
		}
		wait = min(wait, api.MaxWait)
		// The wait may outlast the request timeout: the caller is
		// authenticated (route), so lift it, and bound the answer instead.
		liftDeadlines(w)
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(wait + s.cfg.HTTP.RequestTimeout))
		until(r.Context().Done(), wait, after)
		idx, _ = watch()
	}
	w.Header().Set(api.IndexHeader, strconv.FormatUint(idx, 10))
	return true
}

// blockState and blockNodes block on the replicated state's raft index
// and on gossip's count of changes.
func (s *Server) blockState(w http.ResponseWriter, r *http.Request) bool {
	return s.block(w, r, s.be.StateWatch)
}

// blockJobs blocks on the state's index too, but answers only when the
// jobs moved: an event of a job or an attempt that want keeps (every one
// for a listing, one job's for GET /v1/jobs/{id}) at an index above N.
// Raft entries that touch no job (probe duties, settings, another job)
// do not wake it, so a client following one job reads it once per change
// of that job, however busy the cluster.
func (s *Server) blockJobs(w http.ResponseWriter, r *http.Request, want func(events.Event) bool) bool {
	jobs := func(e events.Event) bool {
		return (e.Topic == events.TopicJob || e.Topic == events.TopicAttempt) && want(e)
	}
	// The answer's index is the ring's newest when that is above the
	// state's: an event is told at the index of the state the pump read
	// (lookJobs), which StateWatch may not show yet, and the body, read
	// after, holds it.
	watch := func() (uint64, <-chan struct{}) {
		i, ch := s.be.StateWatch()
		last, _ := s.events.Last()
		return max(i, last), ch
	}
	return s.blockUntil(w, r, watch, func(done <-chan struct{}, wait time.Duration, after uint64) {
		s.waitEvent(done, wait, after, jobs)
	})
}

// waitEvent returns once the ring holds an event want keeps at an index
// above after, or wait passes, or done closes. A ring that cannot tell
// (after is older than it holds, or its pump has not started) answers at
// once: the caller reads the state as it is.
func (s *Server) waitEvent(done <-chan struct{}, wait time.Duration, after uint64, want func(events.Event) bool) {
	state, _ := s.be.StateWatch()
	evs, cur, ok := s.events.After(after, state, want)
	if !ok || slices.ContainsFunc(evs, func(e events.Event) bool { return e.Index > after }) {
		return
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		changed := s.events.Changed()
		evs, cur, ok = s.events.Next(cur, want)
		if !ok || slices.ContainsFunc(evs, func(e events.Event) bool { return e.Index > after }) {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-done:
			return
		}
	}
}

func (s *Server) blockNodes(w http.ResponseWriter, r *http.Request) bool {
	return s.block(w, r, s.be.NodeWatch)
}

// waitAbove returns watch's index once it is above after, or its index
// when wait passes or done closes first.
func waitAbove(done <-chan struct{}, wait time.Duration, after uint64, watch func() (uint64, <-chan struct{})) uint64 {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		v, ch := watch()
		if v > after {
			return v
		}
		select {
		case <-ch:
		case <-timer.C:
			v, _ := watch()
			return v
		case <-done:
			v, _ := watch()
			return v
		}
	}
}
