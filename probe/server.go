package probe

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/internal/connlimit"
	"github.com/shoal-hpc/shoal/probeplan"
)

// ServerConfig bounds what a probe server accepts.
type ServerConfig struct {
	// Key authenticates every request (a label-derived key of the cluster
	// token). Required, at least 16 bytes.
	Key []byte
	// MaxBytes is the largest bandwidth test accepted; larger requests are
	// refused. Default 4 MiB (--bandwidth-bytes).
	MaxBytes uint64
	// Timeout bounds one test's transfer (--bandwidth-timeout). Default 5s.
	Timeout time.Duration
	// OnTest is called after every bandwidth test the server received, from
	// the connection's goroutine. Optional.
	OnTest func(from string, r BandwidthResult)
	// Logger for refused requests. Default: discard.
	Logger *slog.Logger
	// MaxConns caps the connections open at once, MaxConnsPerSource those
	// from one IP address, so that strangers who connect and send nothing
	// cannot take every slot. Defaults 64 and 4.
	MaxConns, MaxConnsPerSource int
	// TLS, when set, wraps every bandwidth connection: the request (and
	// its HMAC) travels encrypted, verified by the client against the
	// cluster's CA. Nil: plain TCP.
	TLS *tls.Config
	// Counters, when set, gives the counters of the interface each test
	// crosses, read around each half so the result tells what else this
	// end's link carried (Carried): InterfaceCounters. Nil: not read.
	Counters CounterSource
}

// Server is a node's probe server: a UDP echo for latency and a TCP sink
// for bandwidth tests on the same port number. The two are served by
// separate sockets and goroutines, so a ping is never queued behind a
// bandwidth test; bandwidth tests run one at a time, so two never share
// the node's link (a second client is told "busy").
type Server struct {
	cfg ServerConfig
	// limits are MaxBytes and Timeout, which SetLimits changes while
	// the server runs (a SIGHUP).
	limits atomic.Pointer[serverLimits]
	ln     net.Listener
	pc     net.PacketConn
	busy   chan struct{}
	wg     sync.WaitGroup
	now    func() time.Time

	// nonces refuses a request seen before (nonces.go).
	mu     sync.Mutex
	nonces *nonceCache
}

// Listen binds TCP and UDP on host:port (port 0 picks one free for both)
// and starts serving until Close.
func Listen(host string, port int, cfg ServerConfig) (*Server, error) {
	if len(cfg.Key) < 16 {
		return nil, errors.New("probe server: Key must have at least 16 bytes")
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = probeplan.DefaultBudgetConfig().TestBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 64
	}
	if cfg.MaxConnsPerSource <= 0 {
		cfg.MaxConnsPerSource = 4
	}
	s := &Server{cfg: cfg, busy: make(chan struct{}, 1), now: time.Now, nonces: newNonceCache(bwClockSkew, maxNonces)}
	s.SetLimits(cfg.MaxBytes, cfg.Timeout)
	var err error
	for try := 0; try < 20; try++ {
		s.ln, err = net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return nil, fmt.Errorf("listen for bandwidth tests on port %d: %w", port, err)
		}
		p := s.ln.Addr().(*net.TCPAddr).Port
		s.pc, err = net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			break
		}
		s.ln.Close()
		if port != 0 {
			return nil, fmt.Errorf("listen for latency pings on UDP port %d: %w", port, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("find a port free for both TCP and UDP: %w", err)
	}
	// The slots count raw connections, before any handshake.
	s.ln = connlimit.NewListener(s.ln, connlimit.NewSlots(cfg.MaxConns, cfg.MaxConnsPerSource), connlimit.SourceIP)
	if cfg.TLS != nil {
		s.ln = tls.NewListener(s.ln, cfg.TLS)
	}
	s.wg.Add(2)
	go s.serveEcho()
	go s.serveBandwidth()
	return s, nil
}

// Testing reports whether a bandwidth test is running on the server now:
// its bytes are on the interface counters and counted as a test only once
// it ends.
func (s *Server) Testing() bool { return len(s.busy) > 0 }

// Port is the bound port (TCP and UDP).
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

type serverLimits struct {
	maxBytes uint64
	timeout  time.Duration
}

// SetLimits changes the largest test accepted and the transfer timeout
// for the tests that start from now on; zero keeps the current value.
func (s *Server) SetLimits(maxBytes uint64, timeout time.Duration) {
	l := serverLimits{maxBytes: maxBytes, timeout: timeout}
	if cur := s.limits.Load(); cur != nil {
		l.maxBytes = cmp.Or(l.maxBytes, cur.maxBytes)
		l.timeout = cmp.Or(l.timeout, cur.timeout)
	}
	s.limits.Store(&l)
}

// Close stops both servers and waits for their goroutines.
func (s *Server) Close() error {
	err := errors.Join(s.ln.Close(), s.pc.Close())
	s.wg.Wait()
	return err
}

func (s *Server) serveEcho() {
	defer s.wg.Done()
	buf := make([]byte, 512)
	for {
		n, from, err := s.pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p, err := parseEcho(s.cfg.Key, buf[:n])
		if err != nil || p.Reply {
			continue // not a member's ping: no answer at all
		}
		p.Reply = true
		_, _ = s.pc.WriteTo(p.marshal(s.cfg.Key), from)
	}
}

func (s *Server) serveBandwidth() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and the like: do not spin
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.handle(c)
		}()
	}
}

func (s *Server) handle(c net.Conn) {
	log := s.cfg.Logger.With("peer_addr", c.RemoteAddr().String())
	_ = c.SetDeadline(s.now().Add(2 * time.Second))
	hdr := make([]byte, bwFixedLen)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return
	}
	rest, err := parseBWHeader(hdr)
	if err != nil {
		log.Debug("refused bandwidth test", "err", err)
		return
	}
	msg := make([]byte, bwFixedLen+rest)
	copy(msg, hdr)
	if _, err := io.ReadFull(c, msg[bwFixedLen:]); err != nil {
		return
	}
	req, err := parseBWRequest(s.cfg.Key, msg)
	if err != nil {
		log.Warn("refused unauthenticated bandwidth test", "err", err)
		return
	}
	lim := s.limits.Load()
	skew := s.now().Sub(time.UnixMilli(req.At))
	if req.Bytes == 0 || req.Bytes > lim.maxBytes || skew > bwClockSkew || skew < -bwClockSkew {
		log.Warn("refused bandwidth test", "from", req.From, "bytes", req.Bytes, "max", lim.maxBytes, "skew", skew)
		_, _ = c.Write([]byte{verdictRefused})
		return
	}
	if !s.freshNonce(req) {
		log.Warn("refused replayed bandwidth request", "from", req.From)
		_, _ = c.Write([]byte{verdictRefused})
		return
	}
	select {
	case s.busy <- struct{}{}:
		defer func() { <-s.busy }()
	default:
		_, _ = c.Write([]byte{verdictBusy})
		return
	}
	// Both directions share the timeout, so a test takes no longer than
	// a one-way test did and still fits its round.
	timeout := lim.timeout
	if req.Both {
		timeout /= 2
	}
	start := s.now()
	_ = c.SetDeadline(start.Add(timeout + time.Second))
	var cnt Counters
	if s.cfg.Counters != nil {
		cnt = s.cfg.Counters(c.LocalAddr())
	}
	fwd := startHalf(cnt, s.now, true)
	if _, err := c.Write([]byte{verdictGo}); err != nil {
		return
	}
	// Receive until the promised bytes arrived, the sender stops, or the
	// time is up: a slow link still yields a rate from what did arrive.
	_ = c.SetReadDeadline(start.Add(timeout))
	buf := make([]byte, 256<<10)
	var got uint64
	last := start
	for got < req.Bytes {
		n, err := c.Read(buf[:min(uint64(len(buf)), req.Bytes-got)])
		if n > 0 {
			got += uint64(n)
			last = s.now()
		}
		if err != nil {
			break
		}
	}
	res := bwResult{Received: got, Elapsed: last.Sub(start)}
	r := BandwidthResult{Bytes: got, Elapsed: res.Elapsed, At: last, Check: req.Check}
	r.Carried = fwd.carried(r.Mbps(), got)
	_ = c.SetWriteDeadline(s.now().Add(time.Second))
	if _, err := c.Write(res.marshal(s.cfg.Key, req.Nonce)); err != nil || got < req.Bytes {
		s.tested(req.From, r)
		return // the forward direction fell short: no reverse on a broken stream
	}
	if req.Both {
		rev := startHalf(cnt, s.now, false)
		r.RevBytes, r.RevElapsed = s.sendBack(c, req, timeout, buf)
		r.RevCarried = rev.carried(r.RevMbps(), req.Bytes)
	}
	s.tested(req.From, r)
}

func (s *Server) tested(from string, r BandwidthResult) {
	if s.cfg.OnTest != nil && r.Bytes > 0 {
		s.cfg.OnTest(from, r)
	}
}

// sendBack is the reverse half of a version-2 test: it sends req.Bytes
// to the client within timeout and reads the client's account of them
// (the rate only the receiver can measure). Zeroes when the client does
// not answer, e.g. because its own write timed out.
func (s *Server) sendBack(c net.Conn, req bwRequest, timeout time.Duration, buf []byte) (uint64, time.Duration) {
	clear(buf)
	_ = c.SetWriteDeadline(s.now().Add(timeout))
	for sent := uint64(0); sent < req.Bytes; {
		k, err := c.Write(buf[:min(uint64(len(buf)), req.Bytes-sent)])
		sent += uint64(k)
		if err != nil {
			return 0, 0
		}
	}
	_ = c.SetReadDeadline(s.now().Add(timeout + time.Second))
	rb := make([]byte, bwResultLen)
	if _, err := io.ReadFull(c, rb); err != nil {
		return 0, 0
	}
	rev, err := parseBWResultAs(s.cfg.Key, req.Nonce, revDomain, rb)
	if err != nil || rev.Received > req.Bytes {
		s.cfg.Logger.Warn("bad reverse bandwidth account", "from", req.From, "err", err)
		return 0, 0
	}
	return rev.Received, rev.Elapsed
}

func (s *Server) freshNonce(req bwRequest) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nonces.fresh(req.Nonce, time.UnixMilli(req.At), s.now())
}

// BandwidthResult is one completed test. Bytes and Elapsed are the
// forward direction (client to server), RevBytes and RevElapsed the
// reverse (server to client), both as their receiver measured them;
// the reverse is zero for a one-way test or when it did not complete.
type BandwidthResult struct {
	Bytes   uint64
	Elapsed time.Duration
	// At is when the transfer ended, on the measuring clock.
	At time.Time

	RevBytes   uint64
	RevElapsed time.Duration

	// Carried and RevCarried are what this end's link carried in each
	// half's direction while the half ran, in Mbit/s: the half's rate
	// plus the other traffic this end's interface counters saw go the
	// same way (sent, where this end sent the half; received, where it
	// received it). A test that shared a link with a job reads low, and
	// this is how much: the leader gives the reading back what both ends
	// carried besides it (leader/stamp.go). Zero when the counters were
	// not read (no Counters) or the half did not complete.
	Carried, RevCarried float64
	// Check is set on a link check's result (BandwidthCheck): a short
	// test that is not the pair's bandwidth test.
	Check bool
}

// Mbps is the forward rate in Mbit/s (10^6 bit/s); 0 for an empty test.
func (r BandwidthResult) Mbps() float64 { return mbps(r.Bytes, r.Elapsed) }

// RevMbps is the reverse rate in Mbit/s; 0 when the reverse was not measured.
func (r BandwidthResult) RevMbps() float64 { return mbps(r.RevBytes, r.RevElapsed) }

func mbps(n uint64, d time.Duration) float64 {
	if d <= 0 || n == 0 {
		return 0
	}
	return float64(n) * 8 / d.Seconds() / 1e6
}

// Bandwidth errors a client can tell apart.
var (
	ErrPeerBusy    = errors.New("peer is in another bandwidth test")
	ErrPeerRefused = errors.New("peer refused the bandwidth test")
)

// BandwidthTest sends n bytes to the probe server at addr ("host:port")
// and returns the rate the server measured, from the moment it said go
// to the last byte it received. It takes at most about timeout plus a
// few seconds of setup; ctx cancels it.
func BandwidthTest(ctx context.Context, addr string, key []byte, from string, n uint64, timeout time.Duration) (BandwidthResult, error) {
	return BandwidthTestTLS(ctx, addr, key, from, n, timeout, nil)
}

// BandwidthTestTLS is BandwidthTest over TLS when tc is not nil (the
// server's ServerConfig.TLS is set): the request is sent only after the
// server proved it holds a certificate tc trusts.
func BandwidthTestTLS(ctx context.Context, addr string, key []byte, from string, n uint64, timeout time.Duration, tc *tls.Config) (BandwidthResult, error) {
	return bandwidthTest(ctx, addr, key, from, n, timeout, tc, false, false, nil)
}

// BandwidthTestBoth measures both directions in one test (wire version
// 2): n bytes to the server, then n bytes back, each within timeout (the
// server's own timeout should be twice that). The reverse rate is what
// this client received; a reverse that fails leaves it zero and keeps
// the forward result. counters, when not nil, gives the counters of the
// interface the test leaves by, read around each half for the result's
// Carried and RevCarried (InterfaceCounters).
func BandwidthTestBoth(ctx context.Context, addr string, key []byte, from string, n uint64, timeout time.Duration, tc *tls.Config, counters CounterSource) (BandwidthResult, error) {
	return bandwidthTest(ctx, addr, key, from, n, timeout, tc, true, false, counters)
}

// BandwidthCheck is BandwidthTestBoth sent as a link check (wire version
// 3): the server's result has Check set, so that it does not take the
// check for the pair's bandwidth test, and so has this one.
func BandwidthCheck(ctx context.Context, addr string, key []byte, from string, n uint64, timeout time.Duration, tc *tls.Config, counters CounterSource) (BandwidthResult, error) {
	r, err := bandwidthTest(ctx, addr, key, from, n, timeout, tc, true, true, counters)
	r.Check = true
	return r, err
}

func bandwidthTest(ctx context.Context, addr string, key []byte, from string, n uint64, timeout time.Duration, tc *tls.Config, both, check bool, counters CounterSource) (BandwidthResult, error) {
	var req bwRequest
	req.Bytes, req.At, req.From, req.Both, req.Check = n, time.Now().UnixMilli(), from, both, check
	if _, err := randRead(req.Nonce[:]); err != nil {
		return BandwidthResult{}, err
	}
	msg, err := req.marshal(key)
	if err != nil {
		return BandwidthResult{}, err
	}
	var c net.Conn
	if tc != nil {
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second}, Config: tc}
		c, err = d.DialContext(ctx, "tcp", addr)
	} else {
		d := net.Dialer{Timeout: 2 * time.Second}
		c, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: %w", addr, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	_ = c.SetDeadline(time.Now().Add(timeout + 4*time.Second))
	if _, err := c.Write(msg); err != nil {
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: send request: %w", addr, err)
	}
	v := []byte{0}
	if _, err := io.ReadFull(c, v); err != nil {
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: no verdict: %w", addr, err)
	}
	switch v[0] {
	case verdictGo:
	case verdictBusy:
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: %w", addr, ErrPeerBusy)
	default:
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: %w", addr, ErrPeerRefused)
	}
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	chunk := make([]byte, 256<<10)
	var cnt Counters
	if counters != nil {
		cnt = counters(c.LocalAddr())
	}
	fwd := startHalf(cnt, time.Now, false)
	var sent uint64
	for sent < n {
		k, err := c.Write(chunk[:min(uint64(len(chunk)), n-sent)])
		sent += uint64(k)
		if err != nil {
			break // out of time: the server reports what arrived
		}
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok && !both { // *net.TCPConn, *tls.Conn
		// A two-way test keeps writing: its account of the reverse
		// goes back at the end; the server reads exactly n bytes.
		_ = cw.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout + 2*time.Second))
	rb := make([]byte, bwResultLen)
	if _, err := io.ReadFull(c, rb); err != nil {
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: no result: %w", addr, err)
	}
	r, err := parseBWResult(key, req.Nonce, rb)
	if err != nil {
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: %w", addr, err)
	}
	if r.Received == 0 {
		return BandwidthResult{}, fmt.Errorf("bandwidth test to %s: nothing arrived within %v", addr, timeout)
	}
	out := BandwidthResult{Bytes: r.Received, Elapsed: r.Elapsed, At: time.Now()}
	out.Carried = fwd.carried(out.Mbps(), sent)
	if both && r.Received == n {
		rev := startHalf(cnt, time.Now, true)
		out.RevBytes, out.RevElapsed = receiveBack(c, key, req.Nonce, n, timeout, chunk)
		out.RevCarried = rev.carried(out.RevMbps(), out.RevBytes)
	}
	return out, nil
}

// receiveBack reads the reverse payload of a two-way test, timing it
// from the moment the server's result arrived (the server starts sending
// right after it) to the last byte, and tells the server what arrived.
func receiveBack(c net.Conn, key []byte, nonce [16]byte, n uint64, timeout time.Duration, buf []byte) (uint64, time.Duration) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(timeout))
	var got uint64
	last := start
	for got < n {
		k, err := c.Read(buf[:min(uint64(len(buf)), n-got)])
		if k > 0 {
			got += uint64(k)
			last = time.Now()
		}
		if err != nil {
			break
		}
	}
	if got == 0 {
		return 0, 0
	}
	rev := bwResult{Received: got, Elapsed: last.Sub(start)}
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(rev.marshalAs(key, nonce, revDomain))
	return rev.Received, rev.Elapsed
}

// Pinger sends authenticated UDP echoes from one socket.
type Pinger struct {
	key []byte
	pc  net.PacketConn
	seq uint64
}

// NewPinger opens an ephemeral UDP socket for pings.
func NewPinger(key []byte) (*Pinger, error) {
	pc, err := net.ListenPacket("udp", ":0")
	if err != nil {
		return nil, fmt.Errorf("open ping socket: %w", err)
	}
	return &Pinger{key: key, pc: pc}, nil
}

// Close closes the socket.
func (p *Pinger) Close() error { return p.pc.Close() }

// Ping sends count echoes to addr one after the other, each waiting up to
// wait for its answer, and returns the round-trip times of those answered.
func (p *Pinger) Ping(addr string, count int, wait time.Duration) ([]time.Duration, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("ping %s: %w", addr, err)
	}
	var rtts []time.Duration
	buf := make([]byte, 512)
	for range count {
		p.seq++
		sent := time.Now()
		pkt := echoPacket{Seq: p.seq, Sent: sent.UnixNano()}
		if _, err := p.pc.WriteTo(pkt.marshal(p.key), ua); err != nil {
			return rtts, fmt.Errorf("ping %s: %w", addr, err)
		}
		_ = p.pc.SetReadDeadline(sent.Add(wait))
		for {
			n, from, err := p.pc.ReadFrom(buf)
			if err != nil {
				break // timed out: this ping is lost
			}
			r, err := parseEcho(p.key, buf[:n])
			fa, ok := from.(*net.UDPAddr)
			if err != nil || !r.Reply || r.Seq != p.seq || !ok || !fa.IP.Equal(ua.IP) && !ua.IP.IsUnspecified() {
				continue // a late answer to an earlier ping, or noise
			}
			rtts = append(rtts, time.Since(sent))
			break
		}
	}
	if len(rtts) == 0 {
		return nil, fmt.Errorf("ping %s: no answer to %d pings", addr, count)
	}
	return rtts, nil
}
