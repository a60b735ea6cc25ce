package replica

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	frames := []Frame{
		{Kind: KindSnapshot, Index: 7, Term: 2, Data: []byte(`{"v":1}`)},
		{Kind: KindEntry, Index: 8, Term: 2, Data: []byte("cmd")},
		{Kind: KindHeartbeat, Index: 8},
	}
	var buf bytes.Buffer
	for _, f := range frames {
		if err := WriteFrame(&buf, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range frames {
		got, err := ReadFrame(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != want.Kind || got.Index != want.Index || got.Term != want.Term || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("read %+v, wrote %+v", got, want)
		}
	}
	if _, err := ReadFrame(&buf); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

// header builds a frame header claiming n payload bytes.
func header(kind byte, n uint32) []byte {
	h := []byte{kind, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[1:], n)
	return h
}

func TestReadFrameRefusesBadFrames(t *testing.T) {
	t.Parallel()
	ok := make([]byte, payloadHeader)
	for _, c := range []struct {
		name, in, want string
		bad            bool // wraps ErrBadFrame
	}{
		{"unknown kind", string(header(9, 16)) + string(ok), "unknown kind 9", true},
		{"kind zero", string(header(0, 16)) + string(ok), "unknown kind 0", true},
		{"entry over 8 MiB", string(header(2, payloadHeader+MaxEntryFrame+1)), "entry frame of 8388625 bytes, at most 8388624", true},
		{"snapshot over 64 MiB", string(header(1, payloadHeader+MaxSnapshotFrame+1)), "snapshot frame of 67108881 bytes, at most 67108880", true},
		{"heartbeat with data", string(header(3, 17)), "heartbeat frame of 17 bytes, at most 16", true},
		{"payload shorter than its header", string(header(2, 15)), "entry frame of 15 bytes, at least 16", true},
		{"cut in the header", string(header(2, 20))[:3], "unexpected EOF", false},
		{"cut in the data", string(header(2, 20)) + string(ok) + "ab", "unexpected EOF", false},
	} {
		_, err := ReadFrame(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrBadFrame) != c.bad {
			t.Errorf("%s: %v, want an error with %q (bad frame: %v)", c.name, err, c.want, c.bad)
		}
	}
}

func TestWriteFrameRefusesWhatReadRefuses(t *testing.T) {
	t.Parallel()
	for _, f := range []Frame{
		{Kind: 9},
		{Kind: KindHeartbeat, Data: []byte("x")},
		{Kind: KindEntry, Data: make([]byte, MaxEntryFrame+1)},
	} {
		if err := WriteFrame(io.Discard, f); !errors.Is(err, ErrBadFrame) {
			t.Errorf("write %v frame of %d bytes: %v, want ErrBadFrame", f.Kind, len(f.Data), err)
		}
	}
}

// FuzzReadFrame: the decoder never panics, never returns more than a
// kind's bound, and what it accepts re-encodes to the same bytes.
func FuzzReadFrame(f *testing.F) {
	for _, fr := range []Frame{
		{Kind: KindSnapshot, Index: 1, Term: 1, Data: []byte(`{"v":1,"index":1,"state":{}}`)},
		{Kind: KindEntry, Index: 2, Term: 1, Data: []byte(`{"v":1}`)},
		{Kind: KindHeartbeat, Index: 3},
	} {
		var b bytes.Buffer
		_ = WriteFrame(&b, fr)
		f.Add(b.Bytes())
	}
	f.Add(header(2, 1<<31))
	f.Add(header(1, payloadHeader+MaxSnapshotFrame))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		fr, err := ReadFrame(r)
		if err != nil {
			return
		}
		if len(fr.Data)+payloadHeader > maxPayload(fr.Kind) {
			t.Fatalf("%v frame of %d bytes passed its bound", fr.Kind, len(fr.Data))
		}
		var out bytes.Buffer
		if err := WriteFrame(&out, fr); err != nil {
			t.Fatalf("re-encode an accepted frame: %v", err)
		}
		if used := len(in) - r.Len(); !bytes.Equal(out.Bytes(), in[:used]) {
			t.Fatalf("re-encoded %x, read %x", out.Bytes(), in[:used])
		}
	})
}
