package api

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// DrainRequest is the body of POST /v1/nodes/{name}/drain.
type DrainRequest struct {
	// Deadline is a Go duration ("30m"): after it the attempts left on
	// the node are requeued elsewhere. "" waits for them.
	Deadline string `json:"deadline,omitempty"`
}

// DrainStatus answers drain and undrain: the node's drain now.
type DrainStatus struct {
	Node string `json:"node"`
	// Drain is "draining", "drained" or "" (in service).
	Drain    string     `json:"drain"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// Drain takes node out of service (root or token holders only).
func (c *Client) Drain(ctx context.Context, node, deadline string) (DrainStatus, error) {
	var out DrainStatus
	return out, c.Do(ctx, http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/drain", DrainRequest{Deadline: deadline}, &out)
}

// Undrain returns node to service (root or token holders only).
func (c *Client) Undrain(ctx context.Context, node string) (DrainStatus, error) {
	var out DrainStatus
	return out, c.Do(ctx, http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/undrain", struct{}{}, &out)
}
