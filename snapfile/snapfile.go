package snapfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Magic starts every file; Version is the format this package writes and
// the only one it reads.
const (
	Magic   = "shoal-snapshot"
	Version = 1
)

// Errors a refused file wraps: a file of something else, a version this
// shoal does not know, a file cut short, and one whose bytes changed.
var (
	ErrForeign   = errors.New("not a shoal snapshot")
	ErrVersion   = errors.New("unsupported snapshot version")
	ErrTruncated = errors.New("snapshot file is truncated")
	ErrCorrupt   = errors.New("snapshot file is corrupt")
)

// Header describes the payload.
type Header struct {
	// FSMVersion is the version of the state's encoding (raftfsm's).
	FSMVersion int `json:"fsm_version"`
	// RaftIndex and RaftTerm are where the snapshot was taken.
	RaftIndex uint64 `json:"raft_index"`
	RaftTerm  uint64 `json:"raft_term"`
	// Size and SHA256 are the payload's.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// TakenAt is the saving agent's clock.
	TakenAt time.Time `json:"taken_at"`
}

// maxHeader bounds the header line, so a foreign file is not read as one.
const maxHeader = 4096

// Encode returns the file for payload; h's Size and SHA256 are set from it.
func Encode(h Header, payload []byte) ([]byte, error) {
	sum := sha256.Sum256(payload)
	h.Size, h.SHA256 = int64(len(payload)), hex.EncodeToString(sum[:])
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot header: %w", err)
	}
	var b bytes.Buffer
	b.Grow(len(Magic) + len(hb) + len(payload) + 8)
	fmt.Fprintf(&b, "%s %d\n", Magic, Version)
	b.Write(hb)
	b.WriteByte('\n')
	b.Write(payload)
	return b.Bytes(), nil
}

// Decode checks a file and returns its header and payload. The errors wrap
// ErrForeign, ErrVersion, ErrTruncated or ErrCorrupt and say what is wrong.
func Decode(file []byte) (Header, []byte, error) {
	first, rest, ok := bytes.Cut(file, []byte("\n"))
	if !ok {
		if len(file) > 0 && (bytes.HasPrefix(file, []byte(Magic+" ")) || bytes.HasPrefix([]byte(Magic+" "), file)) {
			return Header{}, nil, fmt.Errorf("%w: the file ends inside its first line", ErrTruncated)
		}
		return Header{}, nil, fmt.Errorf("%w: it does not start with %q", ErrForeign, Magic)
	}
	name, ver, _ := bytes.Cut(first, []byte(" "))
	if string(name) != Magic {
		return Header{}, nil, fmt.Errorf("%w: it does not start with %q", ErrForeign, Magic)
	}
	if v, err := strconv.Atoi(string(ver)); err != nil || v != Version {
		return Header{}, nil, fmt.Errorf("%w: %q, this shoal reads version %d", ErrVersion, ver, Version)
	}
	line, payload, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		if len(rest) > maxHeader {
			return Header{}, nil, fmt.Errorf("%w: no header line in the first %d bytes", ErrCorrupt, maxHeader)
		}
		return Header{}, nil, fmt.Errorf("%w: the file ends inside its header", ErrTruncated)
	}
	if len(line) > maxHeader {
		return Header{}, nil, fmt.Errorf("%w: header line of %d bytes, at most %d", ErrCorrupt, len(line), maxHeader)
	}
	var h Header
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return Header{}, nil, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	switch n := int64(len(payload)); {
	case h.Size < 0:
		return Header{}, nil, fmt.Errorf("%w: header says %d bytes", ErrCorrupt, h.Size)
	case n < h.Size:
		return Header{}, nil, fmt.Errorf("%w: %d of its %d bytes of state are there", ErrTruncated, n, h.Size)
	case n > h.Size:
		return Header{}, nil, fmt.Errorf("%w: %d bytes after the %d bytes of state", ErrCorrupt, n-h.Size, h.Size)
	}
	sum := sha256.Sum256(payload)
	if got := hex.EncodeToString(sum[:]); got != h.SHA256 {
		return Header{}, nil, fmt.Errorf("%w: checksum %s, the header says %s", ErrCorrupt, got, h.SHA256)
	}
	return h, payload, nil
}
