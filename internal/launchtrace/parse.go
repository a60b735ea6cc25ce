package launchtrace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Event is one stage line read back from a log.
type Event struct {
	Stage   Stage
	Job     uint64
	Attempt int
	At      time.Time
}

// Parse reads the stage lines of one agent's JSON log and skips every
// other line (text lines, other messages, lines cut short by a crash).
func Parse(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		var l struct {
			Msg     string `json:"msg"`
			Stage   Stage  `json:"stage"`
			Job     uint64 `json:"job"`
			Attempt int    `json:"attempt"`
			At      string `json:"at"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != Msg {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, l.At)
		if err != nil {
			return nil, fmt.Errorf("stage %s of job %d: time %q: %w", l.Stage, l.Job, l.At, err)
		}
		out = append(out, Event{Stage: l.Stage, Job: l.Job, Attempt: l.Attempt, At: at})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	return out, nil
}

// Instants are one job's stage instants across the agents: when the
// first node and when the last node reached each stage.
type Instants struct{ First, Last map[Stage]time.Time }

// ByJob gathers events, from any number of agents' logs, by job.
func ByJob(events []Event) map[uint64]Instants {
	out := map[uint64]Instants{}
	for _, e := range events {
		in, ok := out[e.Job]
		if !ok {
			in = Instants{First: map[Stage]time.Time{}, Last: map[Stage]time.Time{}}
			out[e.Job] = in
		}
		if t, ok := in.First[e.Stage]; !ok || e.At.Before(t) {
			in.First[e.Stage] = e.At
		}
		if t, ok := in.Last[e.Stage]; !ok || e.At.After(t) {
			in.Last[e.Stage] = e.At
		}
	}
	return out
}
