package procstat

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// statLine is a /proc/PID/stat line of a process named comm, in state,
// group pgrp, started at start: the kernel's field order.
func statLine(comm string, state byte, pgrp int, start uint64) string {
	f := []string{"4242", "(" + comm + ")", string(state), "1", strconv.Itoa(pgrp), "4242", "0", "-1", "4194560",
		"100", "0", "0", "0", "1", "2", "0", "0", "20", "0", "1", "0", strconv.FormatUint(start, 10),
		"2473984", "200", "18446744073709551615", "1", "1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "17", "1"}
	return strings.Join(f, " ") + "\n"
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		comm  string
		state byte
		pgrp  int
		start uint64
	}{
		{"sleep", 'S', 4242, 123456},
		{"with space", 'T', 7, 1},
		{"a) b (c", 'R', 99, 18446744073709551615},
		{") 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21", 'Z', 1, 42},
		{"", 'D', 3, 0},
	} {
		got, err := Parse([]byte(statLine(tc.comm, tc.state, tc.pgrp, tc.start)))
		if err != nil {
			t.Fatalf("comm %q: %v", tc.comm, err)
		}
		if want := (Stat{State: tc.state, PPid: 1, Pgrp: tc.pgrp, Start: tc.start}); got != want {
			t.Errorf("comm %q: %+v, want %+v", tc.comm, got, want)
		}
	}
	for _, bad := range []string{
		"",
		"4242 sleep S 1 2",
		"4242 (sleep) S 1 4242",
		strings.Replace(statLine("x", 'S', 1, 5), " 5 ", " five ", 1),
		strings.Replace(statLine("x", 'S', 1, 5), " S ", " SS ", 1),
	} {
		if got, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", bad, got)
		}
	}
}

// This process's own stat parses, and names this process's group.
func TestReadSelf(t *testing.T) {
	t.Parallel()
	st, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.Pgrp != unix.Getpgrp() || st.PPid != os.Getppid() || st.Start == 0 {
		t.Fatalf("own stat %+v: want group %d, parent %d and a start time", st, unix.Getpgrp(), os.Getppid())
	}
}

func FuzzParse(f *testing.F) {
	f.Add("sleep", uint8('S'), 12, uint64(99))
	f.Add("a) (b", uint8('T'), 1, uint64(0))
	f.Fuzz(func(t *testing.T, comm string, state uint8, pgrp int, start uint64) {
		if pgrp < 0 || !('A' <= state && state <= 'Z' || 'a' <= state && state <= 'z') {
			return // the kernel writes none of these
		}
		got, err := Parse([]byte(statLine(comm, state, pgrp, start)))
		if err != nil {
			t.Fatalf("comm %q: %v", comm, err)
		}
		if want := (Stat{State: state, PPid: 1, Pgrp: pgrp, Start: start}); got != want {
			t.Fatalf("comm %q: %+v, want %+v", comm, got, want)
		}
		_, _ = Parse([]byte(comm)) // arbitrary bytes: an error, never a panic
	})
}
