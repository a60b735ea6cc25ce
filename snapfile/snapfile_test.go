package snapfile

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestRoundTripAndRefusals(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"v":1,"index":7,"state":{}}`)
	h := Header{FSMVersion: 1, RaftIndex: 7, RaftTerm: 2, TakenAt: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)}
	file, err := Encode(h, payload)
	if err != nil {
		t.Fatal(err)
	}
	got, p, err := Decode(file)
	if err != nil || !bytes.Equal(p, payload) || got.RaftIndex != 7 || got.Size != int64(len(payload)) {
		t.Fatalf("round trip: %+v %q %v", got, p, err)
	}
	flip := bytes.Clone(file)
	flip[len(flip)-3] ^= 1
	other := bytes.Replace(file, []byte("shoal-snapshot 1"), []byte("shoal-snapshot 9"), 1)
	for _, tc := range []struct {
		name string
		file []byte
		want error
	}{
		{"empty", nil, ErrForeign},
		{"foreign", []byte("SQLite format 3\x00 and more bytes here\n"), ErrForeign},
		{"a raft snapshot without the header", payload, ErrForeign},
		{"cut in the magic", file[:5], ErrTruncated},
		{"cut in the header", file[:30], ErrTruncated},
		{"cut in the payload", file[:len(file)-1], ErrTruncated},
		{"cut right after the header", file[:len(file)-len(payload)], ErrTruncated},
		{"a byte changed", flip, ErrCorrupt},
		{"trailing bytes", append(bytes.Clone(file), 'x'), ErrCorrupt},
		{"another version", other, ErrVersion},
	} {
		if _, _, err := Decode(tc.file); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}
