package replica

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Kind says what a frame carries.
type Kind uint8

const (
	// KindSnapshot carries the FSM's snapshot encoding (raftfsm's
	// FSM.Bytes) taken at Index; Term is the term of that entry, or 0 when
	// the feed does not know it. The follower replaces its state with it.
	KindSnapshot Kind = 1
	// KindEntry carries one applied raft command entry: Index, Term, Data.
	KindEntry Kind = 2
	// KindHeartbeat carries no data; Index is the last entry the server's
	// feed holds, so a follower at or past it is caught up.
	KindHeartbeat Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindSnapshot:
		return "snapshot"
	case KindEntry:
		return "entry"
	case KindHeartbeat:
		return "heartbeat"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Frame bounds: a snapshot holds the whole state, an entry one command
// (raftfsm refuses larger ones long before), a heartbeat nothing.
const (
	MaxSnapshotFrame = 64 << 20
	MaxEntryFrame    = 8 << 20
	// frameHeader is the kind byte and the payload length; payloadHeader
	// the index and the term that start every payload.
	frameHeader   = 5
	payloadHeader = 16
)

// Frame is one unit of the stream.
type Frame struct {
	Kind  Kind
	Index uint64
	Term  uint64
	Data  []byte
}

// maxPayload is the bound of a kind's payload, 0 for an unknown kind.
func maxPayload(k Kind) int {
	switch k {
	case KindSnapshot:
		return payloadHeader + MaxSnapshotFrame
	case KindEntry:
		return payloadHeader + MaxEntryFrame
	case KindHeartbeat:
		return payloadHeader
	}
	return 0
}

// WriteFrame writes fr to w; it refuses a frame ReadFrame would refuse.
func WriteFrame(w io.Writer, fr Frame) error {
	n := payloadHeader + len(fr.Data)
	if max := maxPayload(fr.Kind); max == 0 || n > max {
		return fmt.Errorf("write %v frame of %d bytes: %w", fr.Kind, len(fr.Data), ErrBadFrame)
	}
	var h [frameHeader + payloadHeader]byte
	h[0] = byte(fr.Kind)
	binary.BigEndian.PutUint32(h[1:5], uint32(n))
	binary.BigEndian.PutUint64(h[5:13], fr.Index)
	binary.BigEndian.PutUint64(h[13:21], fr.Term)
	if _, err := w.Write(h[:]); err != nil {
		return fmt.Errorf("write %v frame %d: %w", fr.Kind, fr.Index, err)
	}
	if len(fr.Data) > 0 {
		if _, err := w.Write(fr.Data); err != nil {
			return fmt.Errorf("write %v frame %d: %w", fr.Kind, fr.Index, err)
		}
	}
	return nil
}

// ReadFrame reads one frame from r. The length is checked against the
// kind's bound before anything is allocated, so a hostile or corrupt
// stream costs at most that bound. io.EOF means the stream ended cleanly
// between frames; a frame cut short is io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader) (Frame, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return Frame{}, io.EOF
		}
		return Frame{}, fmt.Errorf("read frame header: %w", err)
	}
	k := Kind(h[0])
	n := binary.BigEndian.Uint32(h[1:5])
	max := maxPayload(k)
	switch {
	case max == 0:
		return Frame{}, fmt.Errorf("%w: unknown kind %d", ErrBadFrame, h[0])
	case uint64(n) > uint64(max):
		return Frame{}, fmt.Errorf("%w: %v frame of %d bytes, at most %d", ErrBadFrame, k, n, max)
	case n < payloadHeader:
		return Frame{}, fmt.Errorf("%w: %v frame of %d bytes, at least %d", ErrBadFrame, k, n, payloadHeader)
	}
	var ph [payloadHeader]byte
	if _, err := io.ReadFull(r, ph[:]); err != nil {
		return Frame{}, fmt.Errorf("read %v frame: %w", k, unexpected(err))
	}
	fr := Frame{Kind: k, Index: binary.BigEndian.Uint64(ph[0:8]), Term: binary.BigEndian.Uint64(ph[8:16])}
	if size := int64(n - payloadHeader); size > 0 {
		// Grown as the bytes arrive: a length without its data costs
		// what was sent, not the bound.
		var buf bytes.Buffer
		buf.Grow(int(min(size, 64<<10)))
		if _, err := io.CopyN(&buf, r, size); err != nil {
			return Frame{}, fmt.Errorf("read %v frame %d: %w", k, fr.Index, unexpected(err))
		}
		fr.Data = buf.Bytes()
	}
	return fr, nil
}

// unexpected turns an EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
