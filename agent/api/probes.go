package api

import (
	"context"
	"net/http"
	"time"
)

// NetPair is one ordered pair of GET /v1/net: the row of From holds an
// RTT or a bandwidth value for To, or their coordinates give an RTT
// estimate. A measured field without a value was never measured and is
// left out, never guessed. Bandwidth tests run in
// one direction at a time, alternating each cycle; both ends record the
// result, so bw_mbps is the latest test between the two nodes.
type NetPair struct {
	From string `json:"from"`
	To   string `json:"to"`
	// RTTms is the 1-minute mean round-trip time; RTT5ms the 5-minute one.
	RTTms  *float64 `json:"rtt_ms,omitempty"`
	RTT5ms *float64 `json:"rtt5_ms,omitempty"`
	// RTTEstms is the round trip the two nodes' Vivaldi network
	// coordinates predict (issue 17), as `consul rtt` does; it is left out
	// when either node has no coordinate. A pair with only an estimate is
	// listed too.
	RTTEstms *float64 `json:"rtt_est_ms,omitempty"`
	// BWMbps is the latest available bandwidth (Mbit/s), PeakMbps the
	// highest seen; their difference is the "complement of available
	// bandwidth" of seed 002 §3.2.2.
	BWMbps   *float64 `json:"bw_mbps,omitempty"`
	PeakMbps *float64 `json:"peak_mbps,omitempty"`
	// MeasuredAt is when the bandwidth was measured (the owner's clock);
	// RTTAt when the latest RTT sample was.
	MeasuredAt time.Time `json:"measured_at,omitzero"`
	RTTAt      time.Time `json:"rtt_measured_at,omitzero"`
}

// ProbeInfo is one probe process of GET /v1/probes.
type ProbeInfo struct {
	Node string `json:"node"`
	// Kind is nodestate, latency or bandwidth.
	Kind string `json:"kind"`
	// State is starting, running or exited as the node reports it, or
	// stale when its heartbeat is older than the agent's stale threshold.
	State string `json:"state"`
	// PID is the process id on its node; 0 for a probe run in-process.
	PID int `json:"pid"`
	// Restarts counts the relaunches the leader ordered.
	Restarts int       `json:"restarts"`
	LastBeat time.Time `json:"last_beat,omitzero"`
	// LastReason is why the leader last relaunched it.
	LastReason string `json:"last_reason,omitempty"`
}

// Net returns every measured ordered pair, sorted by from and to.
func (c *Client) Net(ctx context.Context) ([]NetPair, error) {
	var out []NetPair
	return out, c.Do(ctx, http.MethodGet, "/v1/net", nil, &out)
}

// Probes lists every probe process of every node.
func (c *Client) Probes(ctx context.Context) ([]ProbeInfo, error) {
	var out []ProbeInfo
	return out, c.Do(ctx, http.MethodGet, "/v1/probes", nil, &out)
}
