package api

import (
	"context"
	"net/http"
)

// RaftPeer is one server of raft's configuration (GET /v1/operator/raft/peers).
type RaftPeer struct {
	ID      string `json:"id"`
	Address string `json:"address"`
	Voter   bool   `json:"voter"`
	Leader  bool   `json:"leader"`
}

// RemovePeerRequest is the body of POST /v1/operator/raft/remove-peer.
type RemovePeerRequest struct {
	ID string `json:"id"`
}

// RestoreResponse answers a restore: the raft index the backup was taken at.
type RestoreResponse struct {
	RaftIndex uint64 `json:"raft_index"`
	Jobs      int    `json:"jobs"`
}

// SnapshotSave returns a snapshot file of the cluster's state (snapfile's format).
func (c *Client) SnapshotSave(ctx context.Context) ([]byte, error) {
	var b []byte
	return b, c.Do(ctx, http.MethodGet, "/v1/operator/snapshot", nil, &b)
}

// SnapshotRestore replaces the cluster's state with a snapshot file's.
func (c *Client) SnapshotRestore(ctx context.Context, file []byte) (RestoreResponse, error) {
	var r RestoreResponse
	return r, c.Do(ctx, http.MethodPost, "/v1/operator/snapshot", file, &r)
}

// RaftPeers lists raft's configuration.
func (c *Client) RaftPeers(ctx context.Context) ([]RaftPeer, error) {
	var p []RaftPeer
	return p, c.Do(ctx, http.MethodGet, "/v1/operator/raft/peers", nil, &p)
}

// RemovePeer removes a server from raft's configuration.
func (c *Client) RemovePeer(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodPost, "/v1/operator/raft/remove-peer", RemovePeerRequest{ID: id}, nil)
}
