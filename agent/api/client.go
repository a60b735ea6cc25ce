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
	"strings"
	"time"
)

// ErrUnauthorized is returned when the agent refuses the token.
var ErrUnauthorized = errors.New("the agent refused the token (401): check --token-file or SHOAL_TOKEN")

// Client talks to one agent.
type Client struct {
	Base  string
	Token string
	HTTP  *http.Client
	// Socket is the agent's local Unix socket when the client dials that
	// instead of Base's host (then Base is a placeholder URL).
	Socket string
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
// into out (when out is not nil).
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		switch v := in.(type) {
		case []byte:
			body = bytes.NewReader(v)
		default:
			b, err := json.Marshal(in)
			if err != nil {
				return fmt.Errorf("encode request: %w", err)
			}
			body = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return fmt.Errorf("build request %s %s: %w", method, path, err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("reach agent at %s: %w", c.Addr(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return ErrUnauthorized
	}
	if resp.StatusCode/100 != 2 {
		var e Error
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return &StatusError{Code: resp.StatusCode, Msg: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
	}
	return nil
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

// Stream copies the body of a GET (a log) to w as it arrives.
func (c *Client) Stream(ctx context.Context, path string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.streaming().Do(req)
	if err != nil {
		return fmt.Errorf("reach agent at %s: %w", c.Addr(), err)
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
