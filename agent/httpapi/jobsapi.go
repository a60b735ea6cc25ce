package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/events"
	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// handleSubmit checks a job against the cluster as it is now (so a job
// that can never run is refused at once, with the numbers) and commits it.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	received := s.now()
	var req api.SubmitRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeErr(w, http.StatusBadRequest, "decode job: "+err.Error())
		return
	}
	owner, err := actAs(r, req.Owner)
	if err != nil {
		writeErr(w, http.StatusForbidden, err.Error())
		return
	}
	req.Owner = owner
	if req.RequestID == "" || req.Owner == "" {
		writeErr(w, http.StatusBadRequest, "a job needs a request_id and an owner")
		return
	}
	spec := toRaftSpec(req.Spec)
	if code, why := s.checkSubmit(r, &spec); code != 0 {
		writeErr(w, code, why)
		return
	}
	if err := s.checkHostfile(spec.Hostfile); err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := checkElastic(spec); err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	if b := spec.Begin; !b.IsZero() && b.Before(s.now().Add(-beginSkew)) {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("--begin %s is in the past (the agent's clock says %s): give a later time, or none to start at once", b.UTC().Format(time.RFC3339), s.now().UTC().Format(time.RFC3339)))
		return
	}
	if !spec.Oversubscribe {
		slots, nodes := s.clusterSlots()
		if cpus := spec.NP * spec.CPUs(); cpus > slots {
			need := fmt.Sprintf("%d processes", spec.NP)
			if spec.CPUs() > 1 {
				need = fmt.Sprintf("%d CPUs (%d processes × --cpus-per-rank %d)", cpus, spec.NP, spec.CPUs())
			}
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("the job needs %s but the cluster has %d slots on %d alive nodes and oversubscription is off: use fewer processes or drop --no-oversubscribe", need, slots, nodes))
			return
		}
	}
	b, err := raftfsm.Encode(raftfsm.CmdSubmitJob, s.now(), raftfsm.SubmitJob{RequestID: req.RequestID, Owner: req.Owner, Spec: spec})
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	s.applyAndAnswer(w, r, b, func(res api.ApplyResult) any {
		launchtrace.Mark(r.Context(), s.log, launchtrace.SubmitReceived, res.JobID, 0, received)
		launchtrace.Mark(r.Context(), s.log, launchtrace.SubmitCommitted, res.JobID, 0, s.now())
		return api.SubmitResponse{ID: res.JobID}
	})
}

// applyAndAnswer commits a command and maps raft's and the FSM's refusals
// to HTTP codes: 503 while there is no leader, 400/403/404/409 for a
// command the FSM refused.
func (s *Server) applyAndAnswer(w http.ResponseWriter, r *http.Request, cmd []byte, ok func(api.ApplyResult) any) {
	ctx, cancel := s.writeContext(r)
	defer cancel()
	res, err := s.be.Apply(ctx, cmd)
	if err != nil {
		writeErr(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if res.Err != "" {
		code := http.StatusConflict
		switch res.Code {
		case "invalid", "malformed":
			code = http.StatusBadRequest
		case "not_owner":
			code = http.StatusForbidden
		case "no_such_job":
			code = http.StatusNotFound
		case "over_limit":
			code = http.StatusTooManyRequests
		}
		writeErr(w, code, res.Err)
		return
	}
	// The write's index: a read through another agent passes it as
	// ?min_index= and finds what was written, however far behind that
	// agent's copy was.
	if res.Index > 0 {
		w.Header().Set(api.IndexHeader, strconv.FormatUint(res.Index, 10))
	}
	writeJSON(w, http.StatusOK, ok(res))
}

// checkHostfile refuses a hostfile that names a node this cluster does
// not know, before anything is committed.
func (s *Server) checkHostfile(hf []raftfsm.HostSlots) error {
	for _, h := range hf {
		e, ok := s.be.Node(h.Host)
		if !ok || !e.HasState {
			return fmt.Errorf("hostfile names %q, which is not a node of this cluster (see 'shoal nodes')", h.Host)
		}
	}
	return nil
}

// clusterSlots counts the logical cores of alive nodes: the most processes
// the cluster can run without oversubscribing.
func (s *Server) clusterSlots() (slots, nodes int) {
	for _, e := range s.be.Nodes() {
		if e.HasState && e.Status == nodestate.StatusAlive {
			slots += max(e.State.Static.Threads, e.State.Static.Cores)
			nodes++
		}
	}
	return slots, nodes
}

// handleJobs answers one page of jobs, by ID: ?user=NAME&state=S1,S2
// filter, ?after=ID&limit=N page (limit default api.JobsPageDefault, at
// most api.JobsPageMax). When more jobs match, the api.NextAfterHeader
// header names the ID to pass as ?after= for the next page. A listing that
// answered every job at once grew to 150 MB with one user's queue.
func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	q, err := jobQuery(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.readFences(w, r) {
		return
	}
	if !s.blockJobs(w, r, func(events.Event) bool { return true }) {
		return
	}
	var page []*raftfsm.Job
	var more bool
	var share map[string]float64
	now := s.now()
	s.be.View(func(st *raftfsm.State) {
		page, more = raftfsm.ListJobs(st, q)
		share = raftfsm.FairShare(st, raftfsm.RecentUsage(st, now, 0))
	})
	// The page ends early once it holds api.JobsPageMaxBytes: a page of 1,000 jobs of large
	// specs was 55 MB, held in the serving agent's memory while it was written.
	body := bytes.NewBufferString("[")
	last := uint64(0)
	for i, j := range page {
		aj := s.jobFor(r, j)
		aj.EffectivePriority = raftfsm.EffectivePriority(j, share)
		b, err := json.MarshalIndent(aj, "  ", "  ")
		if err != nil {
			writeErr(w, http.StatusInternalServerError, fmt.Sprintf("encode job %d: %v", j.ID, err))
			return
		}
		if i > 0 && body.Len()+len(b) > api.JobsPageMaxBytes {
			more = true
			break
		}
		if i > 0 {
			body.WriteString(",")
		}
		body.WriteString("\n  ")
		body.Write(b)
		last = j.ID
	}
	if last != 0 {
		body.WriteString("\n")
	}
	body.WriteString("]\n")
	if more {
		w.Header().Set(api.NextAfterHeader, strconv.FormatUint(last, 10))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body.Bytes())
}

var jobStates = []raftfsm.JobState{raftfsm.StateQueued, raftfsm.StateLaunching, raftfsm.StateRunning,
	raftfsm.StateDone, raftfsm.StateFailed, raftfsm.StateKilled}

func jobQuery(r *http.Request) (raftfsm.JobQuery, error) {
	v := r.URL.Query()
	q := raftfsm.JobQuery{Owner: v.Get("user"), Limit: api.JobsPageDefault}
	if s := v.Get("after"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return q, fmt.Errorf("after=%q is not a job ID", s)
		}
		q.After = n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > api.JobsPageMax {
			return q, fmt.Errorf("limit=%q: want a page size from 1 to %d", s, api.JobsPageMax)
		}
		q.Limit = n
	}
	if s := v.Get("state"); s != "" {
		for _, name := range strings.Split(s, ",") {
			st := raftfsm.JobState(strings.TrimSpace(name))
			if !slices.Contains(jobStates, st) {
				return q, fmt.Errorf("state=%q: want one or more of %v, separated by commas", name, jobStates)
			}
			q.States = append(q.States, st)
		}
	}
	return q, nil
}

// jobFor is a job as r may see it: other users' environment values are
// hidden from local users (mayReadEnv).
func (s *Server) jobFor(r *http.Request, j *raftfsm.Job) api.Job {
	out := s.toAPIJob(j)
	if !mayReadEnv(r, j.Owner) {
		out.Spec.Env = hiddenEnv(out.Spec.Env)
	}
	return out
}

// beginSkew is how far in the past a --begin may be when it reaches the
// agent: the CLI refuses past times by its own clock, and the two clocks
// and the trip between them may differ by this much.
const beginSkew = time.Minute

// jobFromPath finds the job the {id} of the path names: a job ID, or
// ARRAY_TASK (Slurm's 12_3) for a task of an array. An ID this agent's
// copy of the state has not assigned yet may be a job the leader just
// created: it is looked up again once the copy has caught up with the
// leader's read index (fence), so "no job N" means there is none.
func (s *Server) jobFromPath(w http.ResponseWriter, r *http.Request) (*raftfsm.Job, bool) {
	ref := r.PathValue("id")
	id, tid, isTask, err := parseJobRef(ref)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	j, assigned := s.findJob(id, tid, isTask)
	if j == nil && !assigned {
		if err := s.fence(r.Context()); err != nil {
			writeErr(w, http.StatusServiceUnavailable, fmt.Sprintf("cannot tell whether job %s exists: %v; ask another agent (shoal members lists them; --addr picks one)", ref, err))
			return nil, false
		}
		j, _ = s.findJob(id, tid, isTask)
	}
	if j == nil {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("no job %s", ref))
		return nil, false
	}
	return j, true
}

// findJob is the job id (or task tid of array id) in this agent's copy of
// the state, nil when the copy has none; assigned says whether the copy
// has handed out the ID already, so that a miss is final (the job ended
// and was collected, or the task does not exist).
func (s *Server) findJob(id uint64, tid int, isTask bool) (*raftfsm.Job, bool) {
	st := s.be.State()
	assigned := id < st.NextJobID
	if !isTask {
		return st.Jobs[id], assigned
	}
	for _, o := range st.Jobs {
		if o.ArrayJobID == id && o.ArrayTaskID == tid {
			return o, assigned
		}
	}
	return nil, assigned
}

// parseJobRef reads a job reference: a job ID, or ARRAY_TASK.
func parseJobRef(ref string) (id uint64, task int, isTask bool, err error) {
	arr, t, isTask := strings.Cut(ref, "_")
	id, err = strconv.ParseUint(arr, 10, 64)
	task, terr := strconv.Atoi(t)
	if err != nil || (isTask && (terr != nil || task < 0)) {
		return 0, 0, false, fmt.Errorf("job ID %q is not a number, nor ARRAY_TASK (e.g. 12_3)", ref)
	}
	return id, task, isTask, nil
}

func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	// A bad reference is refused before any wait.
	id, _, isTask, err := parseJobRef(r.PathValue("id"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.readFences(w, r) {
		return
	}
	// One job's read waits for that job's events; a task named by its
	// array (12_3) for any job's, as its ID is not known yet.
	key := events.JobKey(id)
	mine := func(e events.Event) bool { return isTask || e.Key == key || strings.HasPrefix(e.Key, key+"/") }
	if !s.blockJobs(w, r, mine) {
		return
	}
	if j, ok := s.jobFromPath(w, r); ok {
		aj := s.jobFor(r, j)
		var share map[string]float64
		s.be.View(func(st *raftfsm.State) { share = raftfsm.FairShare(st, raftfsm.RecentUsage(st, s.now(), 0)) })
		aj.EffectivePriority = raftfsm.EffectivePriority(j, share)
		writeJSON(w, http.StatusOK, aj)
	}
}

func (s *Server) handleKill(w http.ResponseWriter, r *http.Request) {
	j, ok := s.jobFromPath(w, r)
	if !ok {
		return
	}
	var body api.KillRequest
	if !decodeActor(w, r, &body, &body.User, "kill needs {\"user\": NAME}") {
		return
	}
	b, _ := raftfsm.Encode(raftfsm.CmdKillJob, s.now(), raftfsm.KillJob{ID: j.ID, User: body.User, Array: body.Array})
	s.applyAndAnswer(w, r, b, func(api.ApplyResult) any { return api.KillResponse{ID: j.ID, State: "killed"} })
}

// handleHold holds (POST /v1/jobs/{id}/hold) or releases (…/release) a
// queued job, or with "array" the queued tasks of an array.
func (s *Server) handleHold(hold bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		j, ok := s.jobFromPath(w, r)
		if !ok {
			return
		}
		var body api.HoldRequest
		if !decodeActor(w, r, &body, &body.User, "hold and release take {\"user\": NAME, \"array\": BOOL}") {
			return
		}
		b, _ := raftfsm.Encode(raftfsm.CmdHoldJob, s.now(), raftfsm.HoldJob{ID: j.ID, User: body.User, Hold: hold, Array: body.Array})
		s.applyAndAnswer(w, r, b, func(res api.ApplyResult) any {
			return api.HoldResponse{ID: j.ID, Held: hold, Jobs: append([]uint64{}, res.JobIDs...)}
		})
	}
}

// handleRequeue puts a job back in the queue (POST /v1/jobs/{id}/requeue).
func (s *Server) handleRequeue(w http.ResponseWriter, r *http.Request) {
	j, ok := s.jobFromPath(w, r)
	if !ok {
		return
	}
	var body api.RequeueRequest
	if !decodeActor(w, r, &body, &body.User, "requeue takes {\"user\": NAME, \"hold\": BOOL}") {
		return
	}
	b, _ := raftfsm.Encode(raftfsm.CmdRequeueJob, s.now(), raftfsm.RequeueJob{ID: j.ID, User: body.User, Hold: body.Hold})
	s.applyAndAnswer(w, r, b, func(api.ApplyResult) any { return api.KillResponse{ID: j.ID, State: "queued"} })
}

// handleUpdate changes a queued job's time limit (POST
// /v1/jobs/{id}/update), or with "array" that of an array's queued tasks.
func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	j, ok := s.jobFromPath(w, r)
	if !ok {
		return
	}
	var body api.UpdateRequest
	if !decodeActor(w, r, &body, &body.User, "update takes {\"user\": NAME, \"timeout\": NANOSECONDS, \"array\": BOOL}") {
		return
	}
	b, _ := raftfsm.Encode(raftfsm.CmdUpdateJob, s.now(), raftfsm.UpdateJob{ID: j.ID, User: body.User, Array: body.Array, Timeout: body.Timeout})
	s.applyAndAnswer(w, r, b, func(res api.ApplyResult) any {
		return api.UpdateResponse{ID: j.ID, Jobs: append([]uint64{}, res.JobIDs...)}
	})
}

// handleAlloc answers a placement question on this agent's current view
// without reserving anything (`shoal alloc`).
func (s *Server) handleAlloc(w http.ResponseWriter, r *http.Request) {
	var ar api.AllocRequest
	if err := json.NewDecoder(r.Body).Decode(&ar); err != nil {
		writeErr(w, http.StatusBadRequest, "decode placement request: "+err.Error())
		return
	}
	if _, server := s.be.NetRows(); !server && r.URL.Query().Get("forwarded") == "" && s.forwardAlloc(w, r, ar) {
		return
	}
	req := toPlacementRequest(ar)
	st := s.be.State()
	if req.Alpha == 0 {
		req.Alpha = st.Settings.Alpha
	}
	req.Done = r.Context().Done() // a client that leaves stops the placement
	var coverage string
	if placement.ReadsNetwork(ar.Policy) {
		var only []string
		for _, h := range ar.Hostfile {
			only = append(only, h.Host)
		}
		waited := time.Duration(max(ar.ModelWaitedMs, 0)) * time.Millisecond
		cov, reason, wait := s.be.ModelWait(st, only, waited)
		if wait && !ar.NoModelWait {
			// The client asks again: an HTTP request does not hang for the
			// bound (45 s by default), and `shoal alloc` shows the count.
			writeJSON(w, http.StatusOK, api.AllocDecision{Hosts: []api.JobHost{}, Wait: true, WaitReason: reason, ModelWait: true,
				ModelCoverage: cov, Score: api.AllocScore{Nodes: []api.AllocNodeScore{}}})
			return
		}
		coverage = cov
	}
	d, err := placement.Place(s.be.PlacementSnapshot(st), req)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	out := toAPIDecision(d)
	out.ModelCoverage = coverage
	writeJSON(w, http.StatusOK, out)
}

// forwardAlloc asks a server the placement question of a client agent,
// which holds no network rows (agent/rows): answered here, netload would
// place blind and wait for a model it can never see. A placement error is
// the server's answer; a server that cannot be reached is skipped; false
// when none answered (the caller answers here, as before servers held the
// rows). ?forwarded=1 is answered where it lands, so it never loops.
func (s *Server) forwardAlloc(w http.ResponseWriter, r *http.Request, ar api.AllocRequest) bool {
	for _, name := range s.be.NetServers() {
		base, err := s.be.PeerBase(name)
		if err != nil {
			continue
		}
		var out api.AllocDecision
		err = s.be.PeerClient(base).Do(r.Context(), http.MethodPost, "/v1/alloc?forwarded=1", ar, &out)
		var se *api.StatusError
		switch {
		case err == nil:
			writeJSON(w, http.StatusOK, out)
			return true
		case errors.As(err, &se) && se.Code == http.StatusBadRequest:
			writeErr(w, http.StatusBadRequest, se.Msg)
			return true
		}
	}
	return false
}

// OptTime is t in UTC, or nil for the zero time (a JSON null).
func OptTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func (s *Server) toAPIJob(j *raftfsm.Job) api.Job {
	out := api.Job{ID: j.ID, State: string(j.State), Owner: j.Owner, ExitCode: j.ExitCode, Attempt: j.Attempt,
		Hosts: []api.JobHost{}, Reason: j.Reason, SubmittedAt: j.SubmittedAt.UTC(), StartedAt: OptTime(j.StartedAt),
		EndedAt: OptTime(j.EndedAt), Spec: toAPISpec(j.Spec), Attempts: []api.Attempt{}}
	if j.State == raftfsm.StateQueued {
		out.WaitReason = j.WaitReason
	}
	out.Name, out.Held = j.Spec.Name, j.Held && j.State == raftfsm.StateQueued
	if j.InArray() {
		task := j.ArrayTaskID
		out.ArrayJobID, out.ArrayTaskID, out.ArrayLimit = j.ArrayJobID, &task, j.ArrayLimit
	}
	for _, at := range j.Attempts {
		x := api.Attempt{N: at.N, State: string(at.State), Head: at.Head, Degraded: at.Degraded, DegradedReason: at.DegradedReason,
			Reason: at.Reason, ExitCode: at.ExitCode, PlacedAt: OptTime(at.PlacedAt), StartedAt: OptTime(at.StartedAt), EndedAt: OptTime(at.EndedAt)}
		if p := at.Progress; p != nil {
			x.Progress = &api.AttemptProgress{FirstIter: p.FirstIter, Iter: p.Iter, FirstAt: p.FirstAt.UTC(), At: p.At.UTC()}
		}
		for _, h := range at.Hosts {
			x.Hosts = append(x.Hosts, api.JobHost{Node: h.Node, Procs: h.NP})
		}
		x.Usage, x.Total = toAPIUsage(at.Usage)
		for _, g := range at.GPUs {
			x.GPUs = append(x.GPUs, api.NodeGPUs{Node: g.Node, Indices: slices.Clone(g.Indices)})
		}
		for _, st := range at.Steps {
			x.Steps = append(x.Steps, api.Step{ID: fmt.Sprintf("%d.%d", j.ID, st.N), N: st.N, Cmd: st.Cmd, Nodes: st.Nodes,
				StartedAt: OptTime(st.StartedAt), EndedAt: OptTime(st.EndedAt), ExitCode: st.ExitCode})
		}
		out.Attempts = append(out.Attempts, x)
	}
	out.Elastic = s.be.Elastic(j)
	if cur := j.Current(); cur != nil {
		last := out.Attempts[len(out.Attempts)-1]
		out.Hosts, out.Degraded, out.DegradedReason = last.Hosts, cur.Degraded, cur.DegradedReason
	}
	return out
}

// checkElastic refuses, before anything is committed, an elastic job the decision layer could
// not drive: no total of iterations, no constraint or two, a deadline already passed.
func checkElastic(sp raftfsm.JobSpec) error {
	e := sp.Elastic
	if e == nil {
		return nil
	}
	switch {
	case e.MinNP < 1 || e.MinNP > e.MaxNP:
		return fmt.Errorf("elastic job: MIN:MAX = %d:%d, want 1 <= MIN <= MAX", e.MinNP, e.MaxNP)
	case e.Iterations < 1:
		return fmt.Errorf("elastic job: give its total of iterations (--iterations N)")
	case e.Deadline < 0 || e.BudgetNH < 0:
		return fmt.Errorf("elastic job: the deadline has already passed or the budget is negative")
	case e.Deadline == 0 && e.BudgetNH == 0:
		return fmt.Errorf("elastic job: give one constraint, --deadline DURATION or --budget NODE-HOURS")
	case e.Deadline > 0 && e.BudgetNH > 0:
		return fmt.Errorf("elastic job: give one constraint, --deadline or --budget, not both")
	}
	return nil
}

// decodeActor reads a request body naming the user who acts (kill, hold,
// release) and settles who that may be (actAs): over the socket the
// kernel's word, with the token whoever the body names. It answers the
// client itself and returns false when the request cannot go on.
func decodeActor(w http.ResponseWriter, r *http.Request, body any, user *string, usage string) bool {
	if err := json.NewDecoder(r.Body).Decode(body); err != nil && !errors.Is(err, io.EOF) {
		writeErr(w, http.StatusBadRequest, usage)
		return false
	}
	u, err := actAs(r, *user)
	if err != nil {
		writeErr(w, http.StatusForbidden, err.Error())
		return false
	}
	if *user = u; u == "" {
		writeErr(w, http.StatusBadRequest, usage)
		return false
	}
	return true
}
