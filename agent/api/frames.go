package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// An exec stream (the body of a POST /v1/exec answer) is a sequence of
// frames: one kind byte, a big-endian uint32 length, then the payload. The
// last frame is FrameExit (a big-endian int32 status) or FrameError.
const (
	FrameStdout byte = 1
	FrameStderr byte = 2
	FrameExit   byte = 3
	FrameError  byte = 4

	// MaxFrame bounds one frame's payload.
	MaxFrame = 1 << 20
)

// ErrBadFrame is returned for a stream that is not a valid frame sequence.
var ErrBadFrame = errors.New("malformed exec stream")

// WriteFrame writes one frame.
func WriteFrame(w io.Writer, kind byte, p []byte) error {
	if len(p) > MaxFrame {
		return fmt.Errorf("%w: frame of %d bytes", ErrBadFrame, len(p))
	}
	var hdr [5]byte
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(p)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(p)
	return err
}

// ReadFrame reads one frame.
func ReadFrame(r io.Reader) (kind byte, p []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	kind = hdr[0]
	if kind < FrameStdout || kind > FrameError {
		return 0, nil, fmt.Errorf("%w: kind %d", ErrBadFrame, kind)
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("%w: frame of %d bytes", ErrBadFrame, n)
	}
	if kind == FrameExit && n != 4 {
		return 0, nil, fmt.Errorf("%w: exit frame of %d bytes", ErrBadFrame, n)
	}
	p = make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrBadFrame, err)
	}
	return kind, p, nil
}

// ExitFrame encodes an exit status.
func ExitFrame(code int) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(int32(code)))
	return b[:]
}

// ExitCode decodes an exit frame's payload.
func ExitCode(p []byte) int { return int(int32(binary.BigEndian.Uint32(p))) }

// CopyFrames copies a stream's output to stdout and stderr and returns the
// remote exit status; a stream that ends without an exit frame is an error
// (the remote side went away).
func CopyFrames(r io.Reader, stdout, stderr io.Writer) (int, error) {
	for {
		kind, p, err := ReadFrame(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return -1, errors.New("exec stream ended without an exit status: the remote agent went away")
			}
			return -1, err
		}
		switch kind {
		case FrameStdout:
			if _, err := stdout.Write(p); err != nil {
				return -1, err
			}
		case FrameStderr:
			if _, err := stderr.Write(p); err != nil {
				return -1, err
			}
		case FrameExit:
			return ExitCode(p), nil
		case FrameError:
			return -1, errors.New(string(p))
		}
	}
}
