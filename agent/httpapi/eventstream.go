package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/events"
)

// handleEvents serves GET /v1/events?index=N&topic=job,attempt,node,probe
// as server-sent events: for each event an "id: INDEX" line, an
// "event: TOPIC" line and a "data: JSON" line (api.Event), then a blank
// line; ": keepalive" every Events.Keepalive while nothing happens. A
// stream resumes after the index of a Last-Event-ID header (an
// EventSource reconnecting), else of ?index; with neither it starts now.
// When the ring no longer holds what it asks for, it first gets a reset
// event per topic. A job's environment is hidden from those who may not
// read it, as in GET /v1/jobs.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	topics, err := eventTopics(r.URL.Query().Get("topic"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	from, resume := r.Header.Get("Last-Event-ID"), true
	if from == "" {
		from = r.URL.Query().Get("index")
	}
	var after uint64
	if from == "" {
		resume = false
	} else if after, err = strconv.ParseUint(strings.TrimSpace(from), 10, 64); err != nil {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("index %q is not an event index: pass the id of the last event read, or none to start now", from))
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeErr(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	liftDeadlines(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	want := func(e events.Event) bool { return slices.Contains(topics, e.Topic) }
	ring := s.events
	var evs []events.Event
	var cur events.Cursor
	intact := true
	if resume {
		state, _ := s.be.StateWatch()
		evs, cur, intact = ring.After(after, state, want)
	} else {
		_, cur = ring.Last()
	}
	keepalive := time.NewTicker(s.cfg.Events.orDefault().Keepalive)
	defer keepalive.Stop()
	var buf bytes.Buffer
	for {
		buf.Reset()
		if !intact {
			last, _ := ring.Last()
			for _, t := range topics {
				writeEvent(&buf, api.Event{Index: last, Topic: t, Type: events.TypeReset, Payload: json.RawMessage("null")})
			}
		}
		for _, e := range evs {
			writeEvent(&buf, s.wireEvent(r, e))
		}
		if buf.Len() > 0 || !intact {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			flusher.Flush()
		}
		changed := ring.Changed()
		if evs, cur, intact = ring.Next(cur, want); len(evs) > 0 || !intact {
			continue
		}
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			if _, err := w.Write([]byte(": keepalive\n\n")); err != nil {
				return
			}
			flusher.Flush()
		case <-changed:
		}
		evs, cur, intact = ring.Next(cur, want)
	}
}

// eventTopics parses ?topic=: every topic when empty.
func eventTopics(raw string) ([]string, error) {
	if raw == "" {
		return events.Topics, nil
	}
	var out []string
	for _, t := range strings.Split(raw, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(events.Topics, t) {
			return nil, fmt.Errorf("topic=%q: want one or more of %s, separated by commas", t, strings.Join(events.Topics, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// wireEvent is e as r may see it: another user's job without the values
// of its environment.
func (s *Server) wireEvent(r *http.Request, e events.Event) api.Event {
	payload := e.Payload
	if j, ok := payload.(api.Job); ok && !mayReadEnv(r, e.Owner) {
		j.Spec.Env = hiddenEnv(j.Spec.Env)
		payload = j
	}
	b, err := json.Marshal(payload)
	if err != nil {
		s.log.Error("encode an event's payload", "topic", e.Topic, "key", e.Key, "err", err)
		b = []byte("null")
	}
	return api.Event{Index: e.Index, Topic: e.Topic, Type: e.Type, Key: e.Key, Payload: b}
}

// writeEvent appends one server-sent event. The JSON holds no newline
// (json.Marshal escapes them in strings), so it is one data line.
func writeEvent(buf *bytes.Buffer, e api.Event) {
	b, _ := json.Marshal(e) // an Event of a marshalled payload always encodes
	fmt.Fprintf(buf, "id: %d\nevent: %s\ndata: %s\n\n", e.Index, e.Topic, b)
}
