package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// blockingGrace is how much longer than its wait a blocking read may
// take: the agent's own answer time, as a plain read's timeout.
const blockingGrace = 30 * time.Second

// blockingGet is a GET that waits, with ?index=after&wait=wait, until the
// agent's index passes after (or the wait ends), and returns the index
// the answer reflects (IndexHeader). after 0 answers at once.
func (c *Client) blockingGet(ctx context.Context, path string, after uint64, wait time.Duration, out any) (uint64, error) {
	if after > 0 {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += fmt.Sprintf("%sindex=%d&wait=%s", sep, after, wait)
	}
	// The answer may take the whole wait, and no longer: a bound, so that
	// an agent whose host vanished is noticed.
	hc := c.streaming()
	hc.Timeout = wait + blockingGrace
	var hdr http.Header
	err := c.each(ctx, func(base string) error {
		var err error
		hdr, err = c.doWith(ctx, hc, base, http.MethodGet, path, false, nil, out)
		return err
	})
	if err != nil {
		return 0, err
	}
	// An agent older than blocking reads sends no index: 0, which the
	// caller takes as "poll".
	idx, _ := strconv.ParseUint(hdr.Get(IndexHeader), 10, 64)
	return idx, nil
}

// WaitJobs returns once the replicated state has moved past index after
// (at once for 0), or wait ends, with the state's index then: a cheap
// wake-up for a caller that then reads what it needs.
func (c *Client) WaitJobs(ctx context.Context, after uint64, wait time.Duration) (uint64, error) {
	var page []Job
	return c.blockingGet(ctx, "/v1/jobs?limit=1", after, wait, &page)
}

// JobAfter returns the job once the replicated state has moved past
// index after (at once for 0), or when wait ends, with the index the
// answer reflects: pass it back to wait for the next change. The index
// is 0 from an agent that does not block (older than blocking reads).
func (c *Client) JobAfter(ctx context.Context, id, after uint64, wait time.Duration) (Job, uint64, error) {
	var out Job
	idx, err := c.blockingGet(ctx, fmt.Sprintf("/v1/jobs/%d", id), after, wait, &out)
	return out, idx, err
}

// ErrStreamEnded is Events' error when the agent closed the stream.
var ErrStreamEnded = errors.New("the agent ended the event stream")

// EventsQuery selects a stream of GET /v1/events.
type EventsQuery struct {
	// Topics are the topics wanted (job, attempt, node, probe); none is all.
	Topics []string
	// After resumes the stream after this event index when Resume is set;
	// otherwise the stream starts now.
	After  uint64
	Resume bool
	// Silence is how long the stream may say nothing, keepalives
	// included, before Events takes it for dead; 0 is three keepalive
	// intervals.
	Silence time.Duration
}

// Events reads the event stream, calling fn with each event in order
// until fn returns an error (returned as is), ctx ends, or the stream
// breaks (or is silent, keepalives included, for three keepalive
// intervals). It does not reconnect: a caller that does passes the last
// event's Index as After.
func (c *Client) Events(ctx context.Context, q EventsQuery, fn func(Event) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	silence := q.Silence
	if silence <= 0 {
		silence = 3 * KeepaliveInterval
	}
	errSilent := fmt.Errorf("%w for %v", ErrSilentStream, silence)
	silent := time.AfterFunc(silence, func() { cancel(errSilent) })
	defer silent.Stop()
	v := url.Values{}
	if len(q.Topics) > 0 {
		v.Set("topic", strings.Join(q.Topics, ","))
	}
	if q.Resume {
		v.Set("index", strconv.FormatUint(q.After, 10))
	}
	path := "/v1/events"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var body io.ReadCloser
	err := c.each(ctx, func(base string) error {
		var err error
		body, err = c.open(ctx, base, path)
		return err
	})
	if err != nil {
		return err
	}
	defer body.Close()
	err = readEvents(body, func() { silent.Reset(silence) }, fn)
	if errors.Is(context.Cause(ctx), errSilent) {
		return errSilent
	}
	return err
}

// ErrSilentStream is Events' error for a stream that stopped saying
// anything, keepalives included: an agent gone without closing it.
var ErrSilentStream = errors.New("the event stream said nothing, not even a keepalive")

// open starts a streaming GET and returns its body once the answer is 200.
func (c *Client) open(ctx context.Context, base, path string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build request GET %s: %w", path, err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.streaming().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("GET %s at %s: %w", path, c.display(base), err)
		}
		return nil, &reachError{addr: c.display(base), err: err}
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, ErrUnauthorized
	}
	var e Error
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(string(b))
	}
	return nil, &StatusError{Code: resp.StatusCode, Msg: e.Error}
}

// readEvents parses server-sent events: fields up to a blank line make
// one event; lines starting with ':' are comments (keepalives). alive is
// called at every line.
func readEvents(r io.Reader, alive func(), fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20) // a job's payload can be large
	var data []string
	for sc.Scan() {
		alive()
		line := sc.Text()
		switch {
		case line == "":
			if len(data) == 0 {
				continue
			}
			var e Event
			if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &e); err != nil {
				return fmt.Errorf("decode an event: %w", err)
			}
			data = data[:0]
			if err := fn(e); err != nil {
				return err
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the event stream: %w", err)
	}
	return ErrStreamEnded
}
