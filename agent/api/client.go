package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrUnauthorized is returned when the agent refuses the token.
var ErrUnauthorized = errors.New("the agent refused the token (401): check --token-file or SHOAL_TOKEN")

// ErrNoAgent is returned when no agent the client knows could be reached.
var ErrNoAgent = errors.New("no agent reachable")

// Client talks to one agent, and to others when that one cannot be reached.
type Client struct {
	Base  string
	Token string
	HTTP  *http.Client
	// Socket is the agent's local Unix socket when the client dials that
	// instead of Base's host (then Base is a placeholder URL).
	Socket string
	// Fallbacks are other agents' base URLs, tried in order when Base
	// cannot be reached or has no raft leader (503). The first that answers
	// becomes Base for the calls after. Retrying a write is safe: a submit
	// carries its request ID (raft keeps one job per ID), a kill of a killed
	// job and a repeated progress report are no-ops.
	Fallbacks []string

	mu sync.Mutex // guards Base and Fallbacks when a call moves to a fallback
}

// SocketScheme prefixes the address of an agent's local socket:
// "unix:///var/lib/shoal/shoal.sock".
const SocketScheme = "unix://"

// NewClient returns a client for the agent at base, e.g.
// "https://127.0.0.1:7948" (see NewTLSClient for the certificates), or at its local socket,
// "unix:///var/lib/shoal/shoal.sock", where the kernel tells the agent who
// the caller is and no token is needed.
func NewClient(base, token string) *Client {
	if path, ok := strings.CutPrefix(base, SocketScheme); ok {
		dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		return &Client{Base: "http://shoal.sock", Token: token, Socket: path,
			HTTP: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dial}}}
	}
	return &Client{Base: strings.TrimRight(base, "/"), Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// NewTLSClient is NewClient verifying the agent, and presenting a client
// certificate, as tc says (tlsca.ClientConfig builds one). The token, when
// not empty, is sent only inside TLS. A socket address ignores tc: the
// kernel authenticates both ends there.
func NewTLSClient(base, token string, tc *tls.Config) *Client {
	c := NewClient(base, token)
	if c.Socket == "" {
		c.HTTP.Transport = &http.Transport{TLSClientConfig: tc, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second, Proxy: http.ProxyFromEnvironment}
	}
	return c
}

// Addr is the agent's address as given to NewClient, for messages.
func (c *Client) Addr() string {
	if c.Socket != "" {
		return SocketScheme + c.Socket
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Base
}

// streaming is an HTTP client without a timeout, for answers that last as
// long as a log or a command, dialling like c.HTTP does.
func (c *Client) streaming() *http.Client {
	if c.HTTP == nil {
		return &http.Client{}
	}
	return &http.Client{Transport: c.HTTP.Transport}
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Code int
	Msg  string
}

func (e *StatusError) Error() string { return fmt.Sprintf("agent answered %d: %s", e.Code, e.Msg) }

// Do sends a request with an optional JSON body and decodes a JSON answer
// into out (when out is not nil). It tries Base, then each of Fallbacks.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	_, err := c.send(ctx, method, path, in, out)
	return err
}

// doHeader is a request like Do that also returns the answer's headers.
func (c *Client) doHeader(ctx context.Context, method, path string, out any) (http.Header, error) {
	return c.send(ctx, method, path, nil, out)
}

func (c *Client) send(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	var body []byte
	if in != nil {
		switch v := in.(type) {
		case []byte:
			body = v
		default:
			b, err := json.Marshal(in)
			if err != nil {
				return nil, fmt.Errorf("encode request: %w", err)
			}
			body = b
		}
	}
	var hdr http.Header
	err := c.each(ctx, func(base string) error {
		var err error
		hdr, err = c.do(ctx, base, method, path, in != nil, body, out)
		return err
	})
	return hdr, err
}

// each runs call against Base and, while it fails for want of an agent
// (unreachable, or no raft leader there), against the fallbacks in turn.
// The agent that answers becomes Base. When none does, the error wraps
// ErrNoAgent, or is the last 503 when some agent answered without a leader.
func (c *Client) each(ctx context.Context, call func(base string) error) error {
	c.mu.Lock()
	order := []string{c.Base}
	if c.Socket == "" { // a socket client's transport dials the socket whatever Base says
		order = append(order, c.Fallbacks...)
	}
	c.mu.Unlock()
	var err, noLeader error
	var tried []string
	for i, base := range order {
		if i > 0 && ctx.Err() != nil {
			break
		}
		tried = append(tried, c.display(base))
		if err = call(base); !retryable(err) {
			if i > 0 { // this agent answered: it is Base from now on, the others its fallbacks
				c.mu.Lock()
				c.Base, c.Fallbacks = base, append(slices.Clone(order[i+1:]), order[:i]...)
				c.mu.Unlock()
			}
			return err
		}
		if isNoLeader(err) {
			noLeader = err
		}
	}
	if noLeader != nil {
		return noLeader
	}
	return fmt.Errorf("%w: tried %s: %w", ErrNoAgent, strings.Join(tried, ", "), err)
}

func (c *Client) display(base string) string {
	if c.Socket != "" {
		return SocketScheme + c.Socket
	}
	return base
}

// retryable: the request did not reach an agent that could act on it.
func retryable(err error) bool {
	var ne *reachError
	return errors.As(err, &ne) || isNoLeader(err)
}

func isNoLeader(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusServiceUnavailable
}

// reachError is a request that got no HTTP answer from the agent.
type reachError struct {
	addr string
	err  error
}

func (e *reachError) Error() string { return fmt.Sprintf("reach agent at %s: %v", e.addr, e.err) }
func (e *reachError) Unwrap() error { return e.err }

func (c *Client) do(ctx context.Context, base, method, path string, hasBody bool, body []byte, out any) (http.Header, error) {
	return c.doWith(ctx, c.HTTP, base, method, path, hasBody, body, out)
}

// doWith is do over hc: c.HTTP, or for a blocking read the client
// without a timeout (the wait bounds it).
func (c *Client) doWith(ctx context.Context, hc *http.Client, base, method, path string, hasBody bool, body []byte, out any) (http.Header, error) {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", method, path, err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil { // the caller gave up: no other agent would be asked in time either
			return nil, fmt.Errorf("%s %s at %s: %w", method, path, c.display(base), err)
		}
		return nil, &reachError{addr: c.display(base), err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, ErrUnauthorized
	}
	if resp.StatusCode/100 != 2 {
		var e Error
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return nil, &StatusError{Code: resp.StatusCode, Msg: e.Error}
	}
	if out == nil {
		return resp.Header, nil
	}
	if raw, ok := out.(*[]byte); ok { // a body that is not JSON (a snapshot file)
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("read answer of %s %s: %w", method, path, err)
		}
		*raw = b
		return resp.Header, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return nil, fmt.Errorf("decode answer of %s %s: %w", method, path, err)
	}
	return resp.Header, nil
}

// Health asks whether the agent is up; no token needed.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.Do(ctx, http.MethodGet, "/v1/health", nil, &h)
}

// Nodes lists every node the agent knows.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	var n []Node
	return n, c.Do(ctx, http.MethodGet, "/v1/nodes", nil, &n)
}

// Self returns the agent's own node.
func (c *Client) Self(ctx context.Context) (Node, error) {
	var n Node
	return n, c.Do(ctx, http.MethodGet, "/v1/self", nil, &n)
}

// Members lists members with their raft roles.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	var m []Member
	return m, c.Do(ctx, http.MethodGet, "/v1/members", nil, &m)
}

// Leader returns the raft leader.
func (c *Client) Leader(ctx context.Context) (Leader, error) {
	var l Leader
	return l, c.Do(ctx, http.MethodGet, "/v1/leader", nil, &l)
}

// Apply submits an encoded raftfsm command; the agent forwards it to the
// leader and answers once it is committed.
func (c *Client) Apply(ctx context.Context, cmd []byte) (ApplyResult, error) {
	var r ApplyResult
	return r, c.Do(ctx, http.MethodPost, "/v1/apply", cmd, &r)
}

// Stream copies the body of a GET (a log) to w as it arrives, from Base
// or, when it cannot be reached, from the first fallback that answers.
func (c *Client) Stream(ctx context.Context, path string, w io.Writer) error {
	return c.each(ctx, func(base string) error { return c.stream(ctx, base, path, w) })
}

func (c *Client) stream(ctx context.Context, base, path string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.streaming().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("stream %s at %s: %w", path, c.display(base), err)
		}
		return &reachError{addr: c.display(base), err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return ErrUnauthorized
	}
	if resp.StatusCode != http.StatusOK {
		var e Error
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e)
		return &StatusError{Code: resp.StatusCode, Msg: e.Error}
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
