package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// JobSpec is what a user asks for; it is stored in raft as is.
type JobSpec = raftfsm.JobSpec

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
	return out, c.Do(ctx, http.MethodPost, "/v1/jobs", r, &out)
}

// Jobs lists every job.
func (c *Client) Jobs(ctx context.Context) ([]Job, error) {
	var out []Job
	return out, c.Do(ctx, http.MethodGet, "/v1/jobs", nil, &out)
}

// Job returns one job.
func (c *Client) Job(ctx context.Context, id uint64) (Job, error) {
	var out Job
	return out, c.Do(ctx, http.MethodGet, fmt.Sprintf("/v1/jobs/%d", id), nil, &out)
}

// Kill kills a job on behalf of user.
func (c *Client) Kill(ctx context.Context, id uint64, user string) error {
	return c.Do(ctx, http.MethodPost, fmt.Sprintf("/v1/jobs/%d/kill", id), map[string]string{"user": user}, nil)
}

// Exec runs a command through an agent's /v1/exec and copies its output;
// it returns the remote exit status.
func (c *Client) Exec(ctx context.Context, req ExecRequest, stdout, stderr io.Writer) (int, error) {
	return c.ExecAuth(ctx, "Bearer "+c.Token, req, stdout, stderr)
}

// ExecAuth is Exec with an explicit Authorization header (a job capability:
// "Job <capability>").
func (c *Client) ExecAuth(ctx context.Context, auth string, req ExecRequest, stdout, stderr io.Writer) (int, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return -1, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/v1/exec", bytes.NewReader(b))
	if err != nil {
		return -1, err
	}
	hr.Header.Set("Authorization", auth)
	hc := c.HTTP
	if hc == nil || hc.Timeout != 0 {
		hc = &http.Client{} // a stream lasts as long as the command
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return -1, fmt.Errorf("reach agent at %s: %w", c.Base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e Error
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e)
		return -1, &StatusError{Code: resp.StatusCode, Msg: e.Error}
	}
	return CopyFrames(resp.Body, stdout, stderr)
}
