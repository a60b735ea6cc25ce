package api

import (
	"bytes"
	"strings"
	"testing"
)

func TestFramesRoundTrip(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteFrame(&b, FrameStdout, []byte("out1 "))
	WriteFrame(&b, FrameStderr, []byte("err"))
	WriteFrame(&b, FrameStdout, []byte("out2"))
	WriteFrame(&b, FrameExit, ExitFrame(-3))
	var o, e strings.Builder
	code, err := CopyFrames(&b, &o, &e)
	if err != nil || code != -3 || o.String() != "out1 out2" || e.String() != "err" {
		t.Fatalf("code %d err %v out %q err %q", code, err, o.String(), e.String())
	}
	if _, err := CopyFrames(bytes.NewReader(nil), &o, &e); err == nil {
		t.Fatal("a stream without an exit frame must be an error")
	}
}

func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	WriteFrame(&b, FrameStdout, []byte("x"))
	WriteFrame(&b, FrameExit, ExitFrame(0))
	f.Add(b.Bytes())
	f.Add([]byte{3, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			kind, p, err := ReadFrame(r)
			if err != nil {
				return
			}
			if len(p) > MaxFrame || kind < FrameStdout || kind > FrameError {
				t.Fatalf("accepted kind %d with %d bytes", kind, len(p))
			}
		}
	})
}
