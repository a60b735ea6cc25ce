package api

// LeaseRenewal is the body of POST /v1/lease: a node renews the lease
// under which it runs its attempts with the raft leader.
type LeaseRenewal struct {
	Node string `json:"node"`
	// Applied is the raft index the node's state has applied: it knows of
	// every attempt that ended at or below it.
	Applied uint64 `json:"applied"`
	// LeaseMS is the lease the node runs under, in milliseconds: the
	// leader waits at least that long for a lost node it renewed.
	LeaseMS int64 `json:"lease_ms"`
}

// LeaseGrant answers a renewal: the leader recorded it, and its state
// had applied Index when it did. A node whose lease lapsed before the
// renewal catches up to Index before it decides which of the attempts
// its guard stopped may go on: every failure the leader had acted on by
// then is at or below Index. 0 means the leader did not say.
type LeaseGrant struct {
	Index uint64 `json:"index"`
}
