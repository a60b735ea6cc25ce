package gossip

import (
	"errors"
	"testing"
)

func TestParseStreamHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		h     []byte
		limit int
		want  int
		err   bool
	}{
		{"small encrypted message", encryptedHeader(300), 1 << 20, 300, false},
		{"exactly the limit", encryptedHeader(1 << 20), 1 << 20, 1 << 20, false},
		{"one byte over", encryptedHeader(1<<20 + 1), 1 << 20, 0, true},
		{"memberlist's own maximum", encryptedHeader(20 << 20), 1 << 20, 0, true},
		{"largest uint32", encryptedHeader(1<<32 - 1), maxStreamMessage, 0, true},
		{"plain push/pull", []byte{6, 0, 0, 0, 1}, 1 << 20, 0, true},
		{"label header", []byte{244, 3, 'a', 'b', 'c'}, 1 << 20, 0, true},
		{"short", []byte{encryptedStreamType, 0, 0}, 1 << 20, 0, true},
		{"negative limit", encryptedHeader(1), -1, 0, true},
	} {
		n, err := parseStreamHeader(tc.h, tc.limit)
		if tc.err != (err != nil) || n != tc.want {
			t.Errorf("%s: got %d, %v; want %d, error %v", tc.name, n, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrStreamRefused) {
			t.Errorf("%s: error %v is not ErrStreamRefused", tc.name, err)
		}
	}
}

func FuzzStreamHeader(f *testing.F) {
	f.Add(encryptedHeader(300), 1<<20)
	f.Add([]byte{6, 0, 0, 0, 1}, 0)
	f.Add([]byte{encryptedStreamType, 0xff, 0xff, 0xff, 0xff}, maxStreamMessage)
	f.Fuzz(func(t *testing.T, h []byte, limit int) {
		n, err := parseStreamHeader(h, limit)
		if err != nil {
			return
		}
		if len(h) != streamHeaderLen || h[0] != encryptedStreamType || n < 0 || n > max(limit, 0) {
			t.Fatalf("accepted %x with limit %d as %d bytes", h, limit, n)
		}
	})
}

func TestStreamMessageCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ state, members, want int }{
		{0, 1, minStreamMessage},                      // nothing sent yet
		{10 << 10, 5, minStreamMessage},               // a small cluster
		{1 << 20, 100, 2<<20 + 100*perMemberOverhead}, // ~100 nodes with network rows
		{15 << 20, 1000, maxStreamMessage},            // beyond memberlist's own limit
		{-5, -5, minStreamMessage},                    // nonsense in, floor out
	} {
		if got := streamMessageCap(tc.state, tc.members); got != tc.want {
			t.Errorf("streamMessageCap(%d, %d) = %d, want %d", tc.state, tc.members, got, tc.want)
		}
	}
}

func TestStreamSlots(t *testing.T) {
	t.Parallel()
	s := newStreamSlots(3, 2, 100)
	steps := []struct {
		op   string
		src  string
		n    int64
		want bool
	}{
		{"admit", "a", 0, true},
		{"admit", "a", 0, true},
		{"admit", "a", 0, false}, // a's share used up
		{"admit", "b", 0, true},
		{"admit", "c", 0, false}, // total used up
		{"leave", "a", 0, true},
		{"admit", "c", 0, true},
		{"admit", "a", 0, false}, // total again
		{"reserve", "", 60, true},
		{"reserve", "", 41, false}, // over budget
		{"reserve", "", 40, true},
		{"reserve", "", -1, false},
		{"unreserve", "", 60, true},
		{"reserve", "", 60, true},
	}
	for i, st := range steps {
		got := true
		switch st.op {
		case "admit":
			got = s.admit(st.src)
		case "leave":
			s.leave(st.src)
		case "reserve":
			got = s.reserve(st.n)
		case "unreserve":
			s.unreserve(st.n)
		}
		if got != st.want {
			t.Fatalf("step %d %s(%q, %d) = %v, want %v", i, st.op, st.src, st.n, got, st.want)
		}
	}
	open, pending := s.usage()
	if open != 3 || pending != 100 {
		t.Fatalf("usage %d open, %d pending; want 3, 100", open, pending)
	}
	for _, src := range []string{"a", "b", "c"} {
		s.leave(src)
	}
	if open, srcs := s.conns.Open(); open != 0 || srcs != 0 {
		t.Fatalf("after every leave: %d open, %d sources tracked", open, srcs)
	}
}
