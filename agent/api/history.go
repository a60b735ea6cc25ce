package api

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// HistoryRecord is one finished job in GET /v1/history (`shoal history`,
// like Slurm's sacct): the job's record while the cluster still holds the
// job, its compact history record once job GC purged it.
type HistoryRecord struct {
	ID       uint64   `json:"id"`
	Owner    string   `json:"owner"`
	Cmd      []string `json:"cmd"`
	NP       int      `json:"np"`
	Nodes    []string `json:"nodes"`
	State    string   `json:"state"`
	ExitCode *int     `json:"exit_code"`
	Reason   string   `json:"reason,omitempty"`
	Attempts int      `json:"attempts"`
	// Purged is true once only the history record is left (no logs, no
	// `shoal job`).
	Purged      bool       `json:"purged"`
	SubmittedAt time.Time  `json:"submitted_at"`
	StartedAt   *time.Time `json:"started_at"`
	EndedAt     time.Time  `json:"ended_at"`
	// Usage is the job's measured use, null until confinement measures it.
	Usage *Usage `json:"usage"`
}

// Usage is what a job's processes used.
type Usage struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	MaxRSSBytes uint64  `json:"max_rss_bytes"`
}

// History lists finished jobs, of user only when user is not "".
func (c *Client) History(ctx context.Context, user string) ([]HistoryRecord, error) {
	path := "/v1/history"
	if user != "" {
		path += "?user=" + url.QueryEscape(user)
	}
	var out []HistoryRecord
	return out, c.Do(ctx, http.MethodGet, path, nil, &out)
}
