package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// handleLogs serves a job's output. The head node of an attempt keeps its
// stdout and stderr on disk; any other agent relays the request there, so
// output survives a leader change. ?stream=stdout|stderr (default stdout),
// ?attempt=N (default: the latest attempt that started), ?offset=BYTES,
// ?follow=1 keeps the answer open until the attempt ends.
func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request) {
	// Authenticated by route: a followed (or just long) log may take hours.
	liftDeadlines(w)
	j, ok := s.jobFromPath(w, r)
	if !ok {
		return
	}
	// Checked here, before a relay to the head: the head sees this agent's
	// certificate, not the user.
	if !s.cfg.PublishOutput && !mayReadOutput(r, j.Owner) {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("the output of job %d is %s's: only its owner, root and token holders may read it (an administrator may publish output with 'shoal agent --publish-output')", j.ID, j.Owner))
		return
	}
	q := r.URL.Query()
	stream := q.Get("stream")
	if stream == "" {
		stream = "stdout"
	}
	if stream != "stdout" && stream != "stderr" {
		writeErr(w, http.StatusBadRequest, "stream must be stdout or stderr")
		return
	}
	att := j.LatestStarted()
	if n := q.Get("attempt"); n != "" {
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 || k > len(j.Attempts) {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("job %d has no attempt %q", j.ID, n))
			return
		}
		att = &j.Attempts[k-1]
	}
	if att == nil {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("job %d has not started yet: no output", j.ID))
		return
	}
	if att.Head != s.cfg.Name {
		base, err := s.be.PeerBase(att.Head)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, fmt.Sprintf("output of job %d is on %s, which is not reachable: %v", j.ID, att.Head, err))
			return
		}
		s.relay(w, r, base+r.URL.RequestURI())
		return
	}
	offset, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	path := s.be.LogPath(j.ID, att.N, stream)
	w.Header().Set("Content-Type", "application/octet-stream")
	// follow=0 (what `shoal logs` without -f sends) reads what there is.
	follow, _ := strconv.ParseBool(q.Get("follow"))
	s.serveLog(w, r, path, offset, follow, Attempt{Job: j.ID, Attempt: att.N})
}

func (s *Server) serveLog(w http.ResponseWriter, r *http.Request, path string, offset int64, follow bool, k Attempt) {
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 64<<10)
	wroteHeader := false
	for {
		// Taken before the check, so an end applied after it still wakes the wait below.
		_, applied := s.be.StateWatch()
		ended := s.attemptEnded(k)
		f, err := os.Open(path)
		if err == nil {
			if _, err := f.Seek(offset, io.SeekStart); err == nil {
				for {
					n, rerr := f.Read(buf)
					if n > 0 {
						if !wroteHeader {
							w.WriteHeader(http.StatusOK)
							wroteHeader = true
						}
						if _, err := w.Write(buf[:n]); err != nil {
							f.Close()
							return
						}
						offset += int64(n)
					}
					if rerr != nil {
						break
					}
				}
			}
			f.Close()
		}
		if fl != nil && wroteHeader {
			fl.Flush()
		}
		// Read once more after the attempt ended: the last bytes may have
		// landed between our read and the check.
		if !follow || ended {
			if !wroteHeader {
				w.WriteHeader(http.StatusOK)
			}
			return
		}
		// New output shows in the file (read again every 100 ms); the
		// attempt's end in the replicated state, at once.
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		case <-applied:
			t.Stop()
		}
	}
}

func (s *Server) attemptEnded(k Attempt) bool {
	ended := true
	s.be.View(func(st *raftfsm.State) {
		j := st.Jobs[k.Job]
		if j == nil || k.Attempt > len(j.Attempts) {
			return
		}
		ended = j.Attempts[k.Attempt-1].Ended()
	})
	return ended
}

// relay proxies a GET to another agent and streams its answer.
func (s *Server) relay(w http.ResponseWriter, r *http.Request, url string) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, url, nil)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	// No token: this agent's client certificate authenticates it (mutual TLS).
	resp, err := s.be.StreamClient().Do(req)
	if err != nil {
		writeErr(w, http.StatusBadGateway, err.Error())
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	copyFlush(w, resp.Body)
}
