package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/shoal-hpc/shoal/agent/api"
)

// handleExec runs one command of a running job attempt on this node (or
// relays it to the node named in the request) and streams its output back
// as frames. It is the server side of `shoal rsh`. When the caller goes
// away, the command's whole process group is killed: no orphans.
func (a *Agent) handleExec(w http.ResponseWriter, r *http.Request) {
	granted, ok := a.authTokenOrJob(w, r)
	if !ok {
		return
	}
	var req api.ExecRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		writeErr(w, http.StatusBadRequest, "decode exec request: "+err.Error())
		return
	}
	if granted != nil && (req.Job != granted.Job || req.Attempt != granted.Attempt) {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("capability is for job %d attempt %d", granted.Job, granted.Attempt))
		return
	}
	// Authenticated, request read: the command's output may stream for hours.
	liftDeadlines(w)
	if len(req.Argv) == 0 && req.Shell == "" {
		writeErr(w, http.StatusBadRequest, "nothing to run: give argv or shell")
		return
	}
	if req.Node != "" && req.Node != a.cfg.Name {
		a.relayExec(w, r, req)
		return
	}
	k := jobKey{Job: req.Job, Attempt: req.Attempt}
	job, err := a.waitRunnable(r.Context(), k)
	if err != nil {
		writeErr(w, http.StatusConflict, err.Error())
		return
	}
	if err := a.jobNode.Fence(k); err != nil {
		writeErr(w, http.StatusConflict, err.Error())
		return
	}
	// An Open MPI daemon gets a session directory of this node's own (ompi.go).
	ompiEnv, err := a.ompiSessionEnv(job, k)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	cmd, err := a.jobCommand(job, k, req.Argv, req.Shell, append(ompiEnv, req.Env...))
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-shoal-exec")
	w.WriteHeader(http.StatusOK)
	fw := &frameWriter{w: w}
	code, err := a.runStreaming(r.Context(), k, cmd, fw.stream(api.FrameStdout), fw.stream(api.FrameStderr))
	if err != nil {
		fw.frame(api.FrameError, []byte(err.Error()))
		return
	}
	fw.frame(api.FrameExit, api.ExitFrame(code))
}

// relayExec forwards an exec request to the agent of the node it names and
// streams the answer back: the caller (a job process holding only a job
// capability) never needs the cluster token.
func (a *Agent) relayExec(w http.ResponseWriter, r *http.Request, req api.ExecRequest) {
	base, err := a.httpAddrOf(req.Node)
	if err != nil {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("unknown node %q: %v", req.Node, err))
		return
	}
	body, _ := json.Marshal(req)
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, base+"/v1/exec", strings.NewReader(string(body)))
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	// No token: this agent's client certificate authenticates it (mutual TLS).
	resp, err := a.streamClient.Do(out)
	if err != nil {
		writeErr(w, http.StatusBadGateway, fmt.Sprintf("reach %s: %v", req.Node, err))
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	copyFlush(w, resp.Body)
}

// copyFlush copies a stream, flushing after every read so output reaches
// the caller as it is produced.
func copyFlush(w http.ResponseWriter, r io.Reader) {
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// frameWriter serialises frames from the stdout and stderr copiers onto one
// HTTP response and flushes each.
type frameWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

func (f *frameWriter) frame(kind byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := api.WriteFrame(f.w, kind, p); err != nil {
		return err
	}
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return nil
}

type frameStream struct {
	f    *frameWriter
	kind byte
}

func (f *frameWriter) stream(kind byte) io.Writer { return frameStream{f, kind} }

func (s frameStream) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += api.MaxFrame {
		end := min(off+api.MaxFrame, len(p))
		if err := s.f.frame(s.kind, p[off:end]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}
