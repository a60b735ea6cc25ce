package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SubmitRequest is POST /v1/jobs.
type SubmitRequest struct {
	// RequestID makes a retried submit create one job; the CLI makes a
	// random one per invocation.
	RequestID string  `json:"request_id"`
	Owner     string  `json:"owner"`
	Spec      JobSpec `json:"spec"`
}

// SubmitResponse is the answer to a submit.
type SubmitResponse struct {
	ID uint64 `json:"id"`
	// Index is the raft index the job was committed at, from the answer's
	// IndexHeader (not in the body): a read with ?min_index= of it finds
	// the job through any agent. 0 from an agent that does not say.
	Index uint64 `json:"-"`
}

// JobHost is one launch unit of a job.
type JobHost struct {
	Node  string `json:"node"`
	Procs int    `json:"procs"`
}

// Attempt is one launch of a job.
type Attempt struct {
	N              int        `json:"n"`
	State          string     `json:"state"`
	Hosts          []JobHost  `json:"hosts"`
	Head           string     `json:"head"`
	Degraded       bool       `json:"degraded"`
	DegradedReason string     `json:"degraded_reason,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	ExitCode       *int       `json:"exit_code"`
	PlacedAt       *time.Time `json:"placed_at"`
	StartedAt      *time.Time `json:"started_at"`
	EndedAt        *time.Time `json:"ended_at"`
	// Progress is what the attempt's program reported; nil when it reported nothing.
	Progress *AttemptProgress `json:"progress,omitempty"`
	// Usage is what the attempt used on each node (its cgroup there) and
	// in total; empty until a node reports (at the attempt's end).
	Usage []NodeUsage `json:"usage,omitempty"`
	Total *NodeUsage  `json:"total,omitempty"`
	// Steps are the MPI launches of a batch script (mpiexec, mpirun inside
	// it), in order; empty for other jobs.
	Steps []Step `json:"steps,omitempty"`
	// GPUs are the GPUs the attempt holds on each node that bound some
	// (CUDA_VISIBLE_DEVICES there), by node.
	GPUs []NodeGPUs `json:"gpus,omitempty"`
}

// NodeGPUs are the indices of a node's GPUs an attempt holds there.
type NodeGPUs struct {
	Node    string `json:"node"`
	Indices []int  `json:"indices"`
}

// Step is one MPI launch of a batch attempt, as Slurm's JOBID.N: ID is
// "JOBID.N". ExitCode is null while it runs or when it ended without a
// status (its launcher's wrapper was killed).
type Step struct {
	ID        string     `json:"id"`
	N         int        `json:"n"`
	Cmd       []string   `json:"cmd"`
	Nodes     string     `json:"nodes"`
	StartedAt *time.Time `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	ExitCode  *int       `json:"exit_code"`
}

// NodeUsage is what an attempt used on one node, or in total (Node ""):
// sacct's TotalCPU (cpu_seconds, split user/system) and MaxRSS
// (max_rss_bytes: the cgroup's peak, page cache included; the total is the
// sum of the nodes' peaks).
type NodeUsage struct {
	Node          string  `json:"node,omitempty"`
	CPUSeconds    float64 `json:"cpu_seconds"`
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	MaxRSSBytes   uint64  `json:"max_rss_bytes"`
	WallSeconds   float64 `json:"wall_seconds"`
	MemLimitBytes uint64  `json:"mem_limit_bytes,omitempty"`
	OOMKills      uint64  `json:"oom_kills,omitempty"`
}

// AttemptProgress is the first and last iteration an attempt reported.
type AttemptProgress struct {
	FirstIter int64     `json:"first_iter"`
	Iter      int64     `json:"iter"`
	FirstAt   time.Time `json:"first_at"`
	At        time.Time `json:"at"`
}

// Elastic is the resizing view of an elastic job.
type Elastic struct {
	MinNP int `json:"min_np"`
	MaxNP int `json:"max_np"`
	// Unit is the processes of one node of the job (its ppn, or 1).
	Unit          int        `json:"unit"`
	Deadline      *time.Time `json:"deadline,omitempty"`
	BudgetNH      float64    `json:"budget_nh,omitempty"`
	SpentNH       float64    `json:"spent_nh"`
	Iterations    int64      `json:"iterations"`
	Iter          int64      `json:"iter"`
	ResumedFrom   int64      `json:"resumed_from"` // first iteration the current attempt reported
	Rate          float64    `json:"rate"`         // iterations per second on the current attempt
	CommShare     float64    `json:"comm_share"`
	CommHeavy     bool       `json:"comm_heavy,omitempty"`
	CurrentNP     int        `json:"current_np"`
	TargetNP      int        `json:"target_np"`
	Predicted     *time.Time `json:"predicted_finish,omitempty"`
	RestartCostS  float64    `json:"restart_cost_s"`
	RestartKnown  bool       `json:"restart_cost_measured"`
	Checkpoints   int        `json:"checkpoints"`
	CheckpointDir string     `json:"checkpoint_dir"`
	// ResizeRequested is set while the current attempt was asked to checkpoint and has not yet.
	ResizeRequested bool `json:"resize_requested,omitempty"`
	// Decision is what the decision layer says now, in one line.
	Decision string `json:"decision"`
	// FixedSize says why the job runs as a fixed-size job, when it does (it never reports progress).
	FixedSize string   `json:"fixed_size,omitempty"`
	History   []Resize `json:"history"`
}

// Resize is one change of an elastic job's process count, with its reason.
type Resize struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	FromNP  int       `json:"from_np"`
	ToNP    int       `json:"to_np"`
	Reason  string    `json:"reason"`
}

// ProgressRequest is POST /v1/jobs/{id}/progress, from inside a job: authorised by the job's
// capability ("Authorization: Job " and the contents of $SHOAL_JOB_CAP_FILE) or the
// cluster token.
type ProgressRequest struct {
	// Attempt defaults to the capability's.
	Attempt int   `json:"attempt,omitempty"`
	Iter    int64 `json:"iter"`
	// Comm is the share of an iteration spent communicating, in [0,1]; omitted = not measured.
	Comm *float64 `json:"comm,omitempty"`
}

// ProgressResponse answers a progress report. Checkpoint is the resize request (the same as
// SIGUSR1): checkpoint at the next iteration boundary and exit 75. Committed says the report is
// being recorded in raft: the last iteration's report before the answer, any other in the
// background (a report that fails to commit is retried with the attempt's next one).
type ProgressResponse struct {
	Job        uint64 `json:"job"`
	Attempt    int    `json:"attempt"`
	Iter       int64  `json:"iter"`
	Committed  bool   `json:"committed"`
	Checkpoint bool   `json:"checkpoint"`
	TargetNP   int    `json:"target_np,omitempty"`
}

// Job is GET /v1/jobs/{id} and one element of GET /v1/jobs.
type Job struct {
	ID             uint64     `json:"id"`
	State          string     `json:"state"`
	Owner          string     `json:"owner"`
	ExitCode       *int       `json:"exit_code"`
	Attempt        int        `json:"attempt"`
	Hosts          []JobHost  `json:"hosts"`
	Degraded       bool       `json:"degraded"`
	DegradedReason string     `json:"degraded_reason,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	WaitReason     string     `json:"wait_reason,omitempty"`
	SubmittedAt    time.Time  `json:"submitted_at"`
	StartedAt      *time.Time `json:"started_at"`
	EndedAt        *time.Time `json:"ended_at"`
	Spec           JobSpec    `json:"spec"`
	Attempts       []Attempt  `json:"attempts"`
	// Elastic is set for an elastic job.
	Elastic *Elastic `json:"elastic,omitempty"`
	// Name is the job's name (spec.name), "" when it has none.
	Name string `json:"name"`
	// Held says a queued job is held (shoal hold) until released.
	Held bool `json:"held,omitempty"`
	// ArrayJobID and ArrayTaskID place a task of an array; ArrayLimit is
	// the array's limit of tasks at once. Absent for other jobs.
	ArrayJobID  uint64 `json:"array_job_id,omitempty"`
	ArrayTaskID *int   `json:"array_task_id,omitempty"`
	ArrayLimit  int    `json:"array_limit,omitempty"`
	// EffectivePriority orders the queue: the priority plus the owner's
	// fair-share factor in (0,1], higher for less recent usage.
	EffectivePriority float64 `json:"effective_priority"`
}

// ExecRequest is POST /v1/exec: run a command of a job's attempt on Node.
type ExecRequest struct {
	Job     uint64 `json:"job"`
	Attempt int    `json:"attempt"`
	Node    string `json:"node"`
	// Argv runs directly; Shell, when set instead, runs with /bin/sh -c as
	// ssh does with its remote command.
	Argv  []string `json:"argv,omitempty"`
	Shell string   `json:"shell,omitempty"`
	Env   []string `json:"env,omitempty"`
}

// Submit creates a job.
func (c *Client) Submit(ctx context.Context, r SubmitRequest) (SubmitResponse, error) {
	var out SubmitResponse
	hdr, err := c.send(ctx, http.MethodPost, "/v1/jobs", r, &out)
	if err != nil {
		return out, err
	}
	out.Index, _ = strconv.ParseUint(hdr.Get(IndexHeader), 10, 64)
	return out, nil
}

// Paging of GET /v1/jobs.
const (
	// JobsPageDefault is the page size when a request names none.
	JobsPageDefault = 100
	// JobsPageMax is the largest page an agent answers.
	JobsPageMax = 1000
	// JobsPageMaxBytes bounds a page's JSON: a page ends before the job that would take it
	// over (a page holds at least one job), with NextAfterHeader set, however many jobs
	// ?limit= asked for.
	JobsPageMaxBytes = 4 << 20
	// NextAfterHeader, on a page that is not the last, names the ID to pass
	// as ?after= for the next one.
	NextAfterHeader = "Shoal-Next-After"
)

// JobsQuery filters a job listing; the zero value is every job.
type JobsQuery struct {
	User   string   // only this owner's jobs
	States []string // only jobs in one of these states
	// PageSize is how many jobs each request asks for; 0 is JobsPageMax.
	PageSize int
	// Consistent reads from a state as new as the leader's when the
	// listing began (ConsistentParam), not only the agent's own copy.
	Consistent bool
}

// Jobs lists every job.
func (c *Client) Jobs(ctx context.Context) ([]Job, error) {
	return c.JobsWhere(ctx, JobsQuery{})
}

// JobsWhere lists the jobs q selects, by ID, following the agent's pages.
func (c *Client) JobsWhere(ctx context.Context, q JobsQuery) ([]Job, error) {
	v := url.Values{}
	if q.User != "" {
		v.Set("user", q.User)
	}
	if len(q.States) > 0 {
		v.Set("state", strings.Join(q.States, ","))
	}
	v.Set("limit", strconv.Itoa(cmp.Or(q.PageSize, JobsPageMax)))
	if q.Consistent {
		v.Set(ConsistentParam, "1")
	}
	out := []Job{}
	for {
		var page []Job
		h, err := c.doHeader(ctx, http.MethodGet, "/v1/jobs?"+v.Encode(), &page)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		next := h.Get(NextAfterHeader)
		if next == "" || len(page) == 0 {
			return out, nil
		}
		v.Set("after", next)
		// The next pages read a state at least as new as the first's.
		v.Del(ConsistentParam)
	}
}

// Job returns one job.
func (c *Client) Job(ctx context.Context, id uint64) (Job, error) {
	var out Job
	return out, c.Do(ctx, http.MethodGet, fmt.Sprintf("/v1/jobs/%d", id), nil, &out)
}

// SendStdin streams r to the standard input of a `shoal run` job's
// attempt, which its launcher gives to rank 0, until r ends. It goes to
// Base only: a stream half sent cannot be retried elsewhere.
func (c *Client) SendStdin(ctx context.Context, id uint64, attempt int, r io.Reader) error {
	c.mu.Lock()
	base := c.Base
	c.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/v1/jobs/%d/stdin?attempt=%d", base, id, attempt), r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.streaming().Do(req)
	if err != nil {
		return fmt.Errorf("send stdin of job %d to %s: %w", id, c.display(base), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e Error
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e)
		return &StatusError{Code: resp.StatusCode, Msg: e.Error}
	}
	return nil
}

// JobRef returns the job ref names: a job ID, or ARRAY_TASK for a task of
// an array (Slurm's 12_3).
func (c *Client) JobRef(ctx context.Context, ref string) (Job, error) {
	var out Job
	return out, c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(ref), nil, &out)
}

// ConsistentJobRef is JobRef from a state as new as the leader's when
// it was asked (ConsistentParam): a change another agent just made shows.
func (c *Client) ConsistentJobRef(ctx context.Context, ref string) (Job, error) {
	var out Job
	return out, c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(ref)+"?"+ConsistentParam+"=1", nil, &out)
}

// Kill kills a job on behalf of user.
func (c *Client) Kill(ctx context.Context, id uint64, user string) error {
	return c.KillWith(ctx, id, KillRequest{User: user})
}

// KillWith kills a job, or with r.Array every unfinished task of an array.
func (c *Client) KillWith(ctx context.Context, id uint64, r KillRequest) error {
	return c.Do(ctx, http.MethodPost, fmt.Sprintf("/v1/jobs/%d/kill", id), r, nil)
}

// Hold holds (hold true) or releases a queued job, or with r.Array the
// queued tasks of an array.
// Partitions lists the partitions by name.
func (c *Client) Partitions(ctx context.Context) ([]Partition, error) {
	var out []Partition
	return out, c.Do(ctx, http.MethodGet, "/v1/partitions", nil, &out)
}

// SetPartition creates or replaces a partition (root or the token).
func (c *Client) SetPartition(ctx context.Context, p Partition) (Partition, error) {
	var out Partition
	return out, c.Do(ctx, http.MethodPost, "/v1/partitions", PartitionRequest{User: "root", Partition: p}, &out)
}

// DeletePartition removes a partition (root or the token).
func (c *Client) DeletePartition(ctx context.Context, name string) error {
	return c.Do(ctx, http.MethodPost, "/v1/partitions/"+url.PathEscape(name)+"/delete", PartitionRequest{User: "root"}, nil)
}

// Requeue puts a job back in the queue, ending its running attempt.
func (c *Client) Requeue(ctx context.Context, id uint64, r RequeueRequest) error {
	return c.Do(ctx, http.MethodPost, "/v1/jobs/"+strconv.FormatUint(id, 10)+"/requeue", r, nil)
}

// Update changes a queued job's time limit.
func (c *Client) Update(ctx context.Context, id uint64, r UpdateRequest) (UpdateResponse, error) {
	var out UpdateResponse
	return out, c.Do(ctx, http.MethodPost, "/v1/jobs/"+strconv.FormatUint(id, 10)+"/update", r, &out)
}

func (c *Client) Hold(ctx context.Context, id uint64, hold bool, r HoldRequest) (HoldResponse, error) {
	verb := "release"
	if hold {
		verb = "hold"
	}
	var out HoldResponse
	return out, c.Do(ctx, http.MethodPost, fmt.Sprintf("/v1/jobs/%d/%s", id, verb), r, &out)
}

// Exec runs a command through an agent's /v1/exec and copies its output;
// it returns the remote exit status.
func (c *Client) Exec(ctx context.Context, req ExecRequest, stdout, stderr io.Writer) (int, error) {
	auth := ""
	if c.Token != "" {
		auth = "Bearer " + c.Token
	}
	return c.ExecAuth(ctx, auth, req, stdout, stderr)
}

// Progress reports a job's iteration with the Authorization header auth ("Job <capability>"
// from inside a job, or "Bearer <token>").
func (c *Client) Progress(ctx context.Context, auth string, id uint64, r ProgressRequest) (ProgressResponse, error) {
	var out ProgressResponse
	b, err := json.Marshal(r)
	if err != nil {
		return out, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/v1/jobs/%d/progress", c.Base, id), bytes.NewReader(b))
	if err != nil {
		return out, err
	}
	hr.Header.Set("Authorization", auth)
	hr.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return out, fmt.Errorf("reach agent at %s: %w", c.Addr(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e Error
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e)
		return out, &StatusError{Code: resp.StatusCode, Msg: e.Error}
	}
	return out, json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&out)
}

// ExecAuth is Exec with an explicit Authorization header (a job capability:
// "Job <capability>"); empty sends none (a client certificate authenticates).
func (c *Client) ExecAuth(ctx context.Context, auth string, req ExecRequest, stdout, stderr io.Writer) (int, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return -1, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/v1/exec", bytes.NewReader(b))
	if err != nil {
		return -1, err
	}
	if auth != "" {
		hr.Header.Set("Authorization", auth)
	}
	hc := c.HTTP
	if hc == nil || hc.Timeout != 0 {
		hc = c.streaming() // a stream lasts as long as the command
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return -1, fmt.Errorf("reach agent at %s: %w", c.Addr(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e Error
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e)
		return -1, &StatusError{Code: resp.StatusCode, Msg: e.Error}
	}
	return CopyFrames(resp.Body, stdout, stderr)
}
