package probe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// The probe port's wire formats. Every message carries an HMAC-SHA256 tag
// under a key derived from the cluster token, so that only members can
// start a test or get an echo: the probe port is not an open amplifier.
// An echo answer is exactly as long as its request, and a bandwidth test
// sends bulk data back to the client only after an authenticated request,
// never more than the client sent (both directions are measured).
//
// Echo (UDP), request and reply alike, 35 bytes:
//
//	'S' kind('q'|'r') version(1) seq(u64) sent(i64 unix ns) tag(16)
//
// Bandwidth (TCP) request, then a one-byte verdict from the server
// (verdictGo starts the transfer), then the payload, then the result:
//
//	'S' 'b' version(1|2) bytes(u64) at(i64 unix ms) nonce(16) len(u8) from tag(32)
//	result: status(u8) received(u64) elapsed(i64 ns) tag(16 over nonce+fields)
//
// Version 2 measures both directions in one test: after the result the
// server sends bytes back (the reverse payload), and the client answers
// with its own account of them, a result whose tag covers 'R' too, so
// the server records the rate it sent at. Each direction is bounded by
// half the server's timeout. Version 1 (one direction) is still served.
//
// Version 3 is version 2 sent as a link check: the same exchange, which
// the server reports with BandwidthResult.Check set, so that a short
// check is not taken for the pair's bandwidth test.

const (
	wireVersion = 1
	// bwVersionBoth is the bandwidth request that measures both directions.
	bwVersionBoth = 2
	// bwVersionCheck is a two-way request sent as a link check.
	bwVersionCheck = 3

	echoLen    = 3 + 8 + 8 + 16
	echoTagLen = 16

	bwFixedLen = 3 + 8 + 8 + 16 + 1
	bwTagLen   = 32
	bwMaxFrom  = 255
	// bwResultLen is status, received, elapsed and a 16-byte tag.
	bwResultLen = 1 + 8 + 8 + 16

	// bwClockSkew is how far a request's timestamp may be from the
	// server's clock: it bounds the replay window.
	bwClockSkew = 2 * time.Minute
)

// Bandwidth verdicts and result statuses.
const (
	verdictGo      byte = 0
	verdictBusy    byte = 1
	verdictRefused byte = 2
)

// ErrBadMessage means a probe-port message failed to parse or to
// authenticate; it is dropped without an answer.
var ErrBadMessage = errors.New("bad probe message")

func tag(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// echoPacket is one latency ping or its answer.
type echoPacket struct {
	Reply bool
	Seq   uint64
	Sent  int64
}

func (p echoPacket) marshal(key []byte) []byte {
	b := make([]byte, echoLen)
	b[0], b[1], b[2] = 'S', 'q', wireVersion
	if p.Reply {
		b[1] = 'r'
	}
	binary.BigEndian.PutUint64(b[3:], p.Seq)
	binary.BigEndian.PutUint64(b[11:], uint64(p.Sent))
	copy(b[19:], tag(key, b[:19])[:echoTagLen])
	return b
}

func parseEcho(key, b []byte) (echoPacket, error) {
	if len(b) != echoLen || b[0] != 'S' || (b[1] != 'q' && b[1] != 'r') || b[2] != wireVersion {
		return echoPacket{}, fmt.Errorf("%w: echo of %d bytes", ErrBadMessage, len(b))
	}
	if !hmac.Equal(b[19:], tag(key, b[:19])[:echoTagLen]) {
		return echoPacket{}, fmt.Errorf("%w: echo tag", ErrBadMessage)
	}
	return echoPacket{Reply: b[1] == 'r', Seq: binary.BigEndian.Uint64(b[3:]), Sent: int64(binary.BigEndian.Uint64(b[11:]))}, nil
}

// bwRequest asks a peer's probe server to receive Bytes.
type bwRequest struct {
	Bytes uint64
	At    int64 // unix ms
	Nonce [16]byte
	From  string
	// Both asks for the reverse direction too (version 2).
	Both bool
	// Check marks a two-way test as a link check (version 3).
	Check bool
}

func (r bwRequest) marshal(key []byte) ([]byte, error) {
	if len(r.From) == 0 || len(r.From) > bwMaxFrom {
		return nil, fmt.Errorf("%w: sender name of %d bytes", ErrBadMessage, len(r.From))
	}
	b := make([]byte, bwFixedLen, bwFixedLen+len(r.From)+bwTagLen)
	b[0], b[1], b[2] = 'S', 'b', wireVersion
	switch {
	case r.Check:
		b[2] = bwVersionCheck
	case r.Both:
		b[2] = bwVersionBoth
	}
	binary.BigEndian.PutUint64(b[3:], r.Bytes)
	binary.BigEndian.PutUint64(b[11:], uint64(r.At))
	copy(b[19:], r.Nonce[:])
	b[35] = byte(len(r.From))
	b = append(b, r.From...)
	return append(b, tag(key, b)...), nil
}

// parseBWHeader reads the fixed part and returns how many more bytes the
// request has (name and tag).
func parseBWHeader(b []byte) (rest int, err error) {
	if len(b) != bwFixedLen || b[0] != 'S' || b[1] != 'b' || (b[2] != wireVersion && b[2] != bwVersionBoth && b[2] != bwVersionCheck) || b[35] == 0 {
		return 0, fmt.Errorf("%w: bandwidth request header", ErrBadMessage)
	}
	return int(b[35]) + bwTagLen, nil
}

func parseBWRequest(key, b []byte) (bwRequest, error) {
	rest, err := parseBWHeader(b[:min(len(b), bwFixedLen)])
	if err != nil {
		return bwRequest{}, err
	}
	if len(b) != bwFixedLen+rest {
		return bwRequest{}, fmt.Errorf("%w: bandwidth request of %d bytes", ErrBadMessage, len(b))
	}
	body := b[:len(b)-bwTagLen]
	if !hmac.Equal(b[len(body):], tag(key, body)) {
		return bwRequest{}, fmt.Errorf("%w: bandwidth request tag", ErrBadMessage)
	}
	r := bwRequest{Bytes: binary.BigEndian.Uint64(b[3:]), At: int64(binary.BigEndian.Uint64(b[11:])), From: string(b[bwFixedLen:len(body)]),
		Both: b[2] == bwVersionBoth || b[2] == bwVersionCheck, Check: b[2] == bwVersionCheck}
	copy(r.Nonce[:], b[19:35])
	return r, nil
}

// bwResult is the server's account of one test.
type bwResult struct {
	Status   byte
	Received uint64
	Elapsed  time.Duration
}

func (r bwResult) marshal(key []byte, nonce [16]byte) []byte {
	return r.marshalAs(key, nonce, nil)
}

// revDomain separates the client's account of the reverse payload from
// the server's result, so one can never be replayed as the other.
var revDomain = []byte{'R'}

// marshalAs tags the result under domain (nil: the server's result).
func (r bwResult) marshalAs(key []byte, nonce [16]byte, domain []byte) []byte {
	b := make([]byte, bwResultLen)
	b[0] = r.Status
	binary.BigEndian.PutUint64(b[1:], r.Received)
	binary.BigEndian.PutUint64(b[9:], uint64(r.Elapsed))
	copy(b[17:], tag(key, nonce[:], domain, b[:17])[:16])
	return b
}

func parseBWResult(key []byte, nonce [16]byte, b []byte) (bwResult, error) {
	return parseBWResultAs(key, nonce, nil, b)
}

func parseBWResultAs(key []byte, nonce [16]byte, domain, b []byte) (bwResult, error) {
	if len(b) != bwResultLen || !hmac.Equal(b[17:], tag(key, nonce[:], domain, b[:17])[:16]) {
		return bwResult{}, fmt.Errorf("%w: bandwidth result", ErrBadMessage)
	}
	return bwResult{Status: b[0], Received: binary.BigEndian.Uint64(b[1:]), Elapsed: time.Duration(binary.BigEndian.Uint64(b[9:]))}, nil
}
