package main

import (
	"strings"
	"testing"
)

const ssBefore = `0      0      127.0.0.1:41947 127.0.0.1:53422 users:(("shoal",pid=100,fd=9))
	 bbr wscale:10,10 rto:200 bytes_sent:2217 segs_out:5 segs_in:7 data_segs_out:2 lastsnd:4
0      0      127.0.0.1:53422 127.0.0.1:41947 users:(("shoal",pid=200,fd=11))
	 bbr wscale:10,10 rto:200 segs_out:40 segs_in:5 data_segs_out:30
0      0      127.0.0.1:38463 127.0.0.1:46688
	 bbr wscale:10,10 rto:200 segs_in:2 segs_out:999
`

const ssAfter = `0      0      127.0.0.1:41947 127.0.0.1:53422 users:(("shoal",pid=100,fd=9))
	 bbr wscale:10,10 rto:200 bytes_sent:9000 segs_out:25 segs_in:17 data_segs_out:12 lastsnd:4
0      0      127.0.0.1:41947 127.0.0.1:60000 users:(("shoal",pid=100,fd=12),("shoal-exec",pid=300,fd=3))
	 bbr wscale:10,10 rto:200 segs_out:7 segs_in:3 data_segs_out:4
0      0      127.0.0.1:53422 127.0.0.1:41947 users:(("shoal",pid=200,fd=11))
	 bbr wscale:10,10 rto:200 segs_out:41 segs_in:25 data_segs_out:31
`

func TestParseSSSegmentsSent(t *testing.T) {
	t.Parallel()
	before, err := parseSS(strings.NewReader(ssBefore))
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseSS(strings.NewReader(ssAfter))
	if err != nil {
		t.Fatal(err)
	}
	// pid 100: 25-5 on the socket both saw, all 7 of the new one (not
	// data_segs_out, and the shared socket counts for its first process).
	for pid, want := range map[int]uint64{100: 27, 200: 1, 300: 0} {
		if got := after.sentSince(before, pid); got != want {
			t.Errorf("pid %d sent %d segments, want %d", pid, got, want)
		}
	}
	if len(before) != 2 {
		t.Errorf("a socket without a process was counted: %v", before)
	}
}

func TestParseSSBadCount(t *testing.T) {
	t.Parallel()
	_, err := parseSS(strings.NewReader("0 0 a:1 b:2 users:((\"x\",pid=1,fd=3))\n\t segs_out:lots\n"))
	if err == nil {
		t.Fatal("a segs_out that is not a number parsed")
	}
}
