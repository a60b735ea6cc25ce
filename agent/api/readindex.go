package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// ReadIndex is the answer of GET /v1/read-index on the raft leader: the
// index of the state it had applied once a quorum confirmed that it still
// leads (etcd's ReadIndex). Every write acknowledged before the request
// is at or below it, so an agent whose own state has applied Index
// answers reads as current as the leader's.
type ReadIndex struct {
	Index uint64 `json:"index"`
}

// Query parameters of the reads of jobs (GET /v1/jobs, GET /v1/jobs/{id}).
const (
	// MinIndexParam (?min_index=N) answers from a state that has applied
	// raft index N: the agent waits, within its request timeout, until its
	// own copy has caught up. Pass the IndexHeader of a write's answer to
	// read that write through any agent.
	MinIndexParam = "min_index"
	// ConsistentParam (?consistent=1) answers from a state at least as new
	// as the leader's when the read arrived: the agent first asks the
	// leader its read index, then waits for its own copy to reach it.
	ConsistentParam = "consistent"
)

// JobAt returns the job from a state that has applied index (at once
// for 0), with the index the answer reflects: after a write answered with
// that index, a read of what it wrote, through any agent, finds it.
func (c *Client) JobAt(ctx context.Context, id, index uint64) (Job, uint64, error) {
	var out Job
	path := fmt.Sprintf("/v1/jobs/%d", id)
	if index > 0 {
		path += fmt.Sprintf("?%s=%d", MinIndexParam, index)
	}
	hdr, err := c.doHeader(ctx, http.MethodGet, path, &out)
	if err != nil {
		return out, 0, err
	}
	idx, _ := strconv.ParseUint(hdr.Get(IndexHeader), 10, 64)
	return out, idx, nil
}
