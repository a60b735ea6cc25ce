package api

// LeaseRenewal is the body of POST /v1/lease: a node renews the lease
// under which it runs its attempts with the raft leader.
type LeaseRenewal struct {
	Node string `json:"node"`
}
