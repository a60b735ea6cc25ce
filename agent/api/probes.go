package api

import (
	"context"
	"net/http"
	"time"
)

// NetPair is one ordered pair of GET /v1/net: the row of From holds an
// RTT or a bandwidth value for To, or their coordinates give an RTT
// estimate. A measured field without a value was never measured and is
// left out, never guessed. A bandwidth test measures both directions
// and both ends record both, so bw_out_mbps (From to To) and
// bw_in_mbps (To to From) are the latest test between the two nodes, and
// bw_mbps the worse of the two.
//
// The *_age_s fields are how old each figure is, in seconds, on the
// answering agent's clock against the measuring node's timestamp (clock
// skew between them shows; never below 0): bw_out_age_s and bw_in_age_s
// per direction, rtt_age_s for the latest RTT sample, rtt_est_age_s for
// the older of the two nodes' coordinates as of their latest gossiped
// state.
type NetPair struct {
	From string `json:"from"`
	To   string `json:"to"`
	// RTTms is the 1-minute mean round-trip time; RTT5ms the 5-minute one.
	RTTms  *float64 `json:"rtt_ms,omitempty"`
	RTT5ms *float64 `json:"rtt5_ms,omitempty"`
	// RTTEstms is the round trip the two nodes' Vivaldi network
	// coordinates predict, as `consul rtt` does; it is left out
	// when either node has no coordinate. A pair with only an estimate is
	// listed too.
	RTTEstms *float64 `json:"rtt_est_ms,omitempty"`
	// BWMbps is the latest available bandwidth (Mbit/s) of the worse
	// direction, PeakMbps the highest seen either way; their difference
	// is the "complement of available bandwidth" of seed 002 §3.2.2.
	BWMbps   *float64 `json:"bw_mbps,omitempty"`
	PeakMbps *float64 `json:"peak_mbps,omitempty"`
	// Per direction, Mbit/s: out is From to To, in is To to From; the
	// latest available and the highest seen.
	BWOutMbps   *float64 `json:"bw_out_mbps,omitempty"`
	BWInMbps    *float64 `json:"bw_in_mbps,omitempty"`
	PeakOutMbps *float64 `json:"peak_out_mbps,omitempty"`
	PeakInMbps  *float64 `json:"peak_in_mbps,omitempty"`
	// CarriedOutMbps and CarriedInMbps are what From's link carried that
	// way while the latest test ran, the test included: well above the
	// reading, the test shared the link with other traffic, and the
	// leader gives the reading back what both ends carried besides it.
	// Left out when From did not count (a loopback cluster).
	CarriedOutMbps *float64 `json:"carried_out_mbps,omitempty"`
	CarriedInMbps  *float64 `json:"carried_in_mbps,omitempty"`
	// Ages in seconds (see the type's comment).
	BWOutAgeS  *float64 `json:"bw_out_age_s,omitempty"`
	BWInAgeS   *float64 `json:"bw_in_age_s,omitempty"`
	RTTAgeS    *float64 `json:"rtt_age_s,omitempty"`
	RTTEstAgeS *float64 `json:"rtt_est_age_s,omitempty"`
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
