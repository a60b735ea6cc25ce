package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// block is the blocking part of a read (Consul's and Nomad's blocking
// queries): with ?index=N it waits until watch's index is above N, or
// ?wait=D passes (api.DefaultWait, at most api.MaxWait), or the client
// leaves; then, and for every read without ?index, it sets
// api.IndexHeader to the index the answer reflects. It answers a bad
// query itself and returns false.
func (s *Server) block(w http.ResponseWriter, r *http.Request, watch func() (uint64, <-chan struct{})) bool {
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
		idx = waitAbove(r.Context().Done(), wait, after, watch)
	}
	w.Header().Set(api.IndexHeader, strconv.FormatUint(idx, 10))
	return true
}

// blockState and blockNodes block on the replicated state's raft index
// and on gossip's count of changes.
func (s *Server) blockState(w http.ResponseWriter, r *http.Request) bool {
	return s.block(w, r, s.be.StateWatch)
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
