package probe

import (
	"errors"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOtherMbps: the test's own payload, with its headers, is not
// traffic besides it; what crossed beyond that is, over the window.
func TestOtherMbps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name             string
		crossed, payload uint64
		window           time.Duration
		want             float64
	}{
		{"a quiet end: the payload and its headers", 2_090_000, 2_000_000, time.Second, 0},
		{"a flow of 6.25 MB/s besides", 2_100_000 + 6_250_000, 2_000_000, time.Second, 50},
		{"half a second", 2_100_000 + 3_125_000, 2_000_000, 500 * time.Millisecond, 50},
		{"fewer bytes than the payload", 1_000, 2_000_000, time.Second, 0},
		{"no window", 9_000_000, 0, 0, 0},
	} {
		if got := otherMbps(c.crossed, c.payload, c.window); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: otherMbps = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestHalfCounter_Carried: a half reads its own direction only; counters
// that fail or go backwards (an interface gone) give 0, not a figure.
func TestHalfCounter_Carried(t *testing.T) {
	t.Parallel()
	script := func(readings ...[2]uint64) Counters {
		i := 0
		return func() (rx, tx uint64, err error) {
			if i >= len(readings) {
				return 0, 0, errors.New("no more readings")
			}
			r := readings[i]
			i++
			return r[0], r[1], nil
		}
	}
	// 2 MB of test payload sent; 100 GB more sent meanwhile, which at
	// any window of a test is far above the rate: carried > rate.
	h := startHalf(script([2]uint64{7, 1000}, [2]uint64{7, 1000 + 2_100_000 + 100_000_000_000}), time.Now, false)
	if got := h.carried(40, 2_000_000); !(got > 40) {
		t.Errorf("sender with traffic besides the test: carried %v, want above the rate 40", got)
	}
	// The receive side moved nothing besides the payload; the sent side
	// did, but a receiving half does not look at it.
	h = startHalf(script([2]uint64{1000, 0}, [2]uint64{1000 + 2_000_000, 1 << 40}), time.Now, true)
	if got := h.carried(40, 2_000_000); got != 40 {
		t.Errorf("receiver with only the test: carried %v, want the rate 40", got)
	}
	h = startHalf(script([2]uint64{0, 5000}, [2]uint64{0, 10}), time.Now, false)
	if got := h.carried(40, 2_000_000); got != 0 {
		t.Errorf("counters went backwards: carried %v, want 0", got)
	}
	h = startHalf(script([2]uint64{0, 5000}), time.Now, false)
	if got := h.carried(40, 2_000_000); got != 0 {
		t.Errorf("second reading failed: carried %v, want 0", got)
	}
	if got := startHalf(nil, time.Now, false).carried(40, 1); got != 0 {
		t.Errorf("no counters: carried %v, want 0", got)
	}
	if got := startHalf(script([2]uint64{0, 0}, [2]uint64{0, 1 << 30}), time.Now, false).carried(0, 1); got != 0 {
		t.Errorf("no rate: carried %v, want 0", got)
	}
}

// TestHalfCounter_Exact: over a clock that moves one second between the
// two readings, 6.25 MB besides a 2 MB payload (and its headers) is
// 50 Mbit/s on top of the rate.
func TestHalfCounter_Exact(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_763_790_000, 0)
	tick := 0
	clock := func() time.Time { tick++; return t0.Add(time.Duration(tick) * time.Second) }
	i := 0
	readings := [][2]uint64{{0, 1000}, {0, 1000 + 2_100_000 + 6_250_000}}
	c := func() (rx, tx uint64, err error) { r := readings[i]; i++; return r[0], r[1], nil }
	if got := startHalf(c, clock, false).carried(40, 2_000_000); math.Abs(got-90) > 1e-9 {
		t.Fatalf("carried = %v, want 90 (40 + 50 besides)", got)
	}
}

// TestInterfaceCounters: a loopback address, or one no interface holds,
// gives no counters; an interface's own address gives that interface's.
func TestInterfaceCounters(t *testing.T) {
	t.Parallel()
	if InterfaceCounters(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}) != nil {
		t.Error("loopback address: got counters, want none")
	}
	if InterfaceCounters(&net.TCPAddr{IP: net.IPv4(203, 0, 113, 254)}) != nil { // TEST-NET-3
		t.Error("an address no interface holds: got counters, want none")
	}
	if InterfaceCounters(&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}) != nil {
		t.Error("not a TCP address: got counters, want none")
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || i.Flags&net.FlagLoopback != 0 || n.IP.IsLoopback() {
				continue
			}
			c := InterfaceCounters(&net.TCPAddr{IP: n.IP})
			if c == nil {
				t.Fatalf("%s on %s: no counters", n.IP, i.Name)
			}
			rx, tx, err := c()
			if err != nil {
				t.Fatalf("%s on %s: %v", n.IP, i.Name, err)
			}
			want, err := os.ReadFile("/sys/class/net/" + i.Name + "/statistics/rx_bytes")
			if err == nil {
				if w, _ := strconv.ParseUint(strings.TrimSpace(string(want)), 10, 64); rx+1<<20 < w || rx > w {
					t.Errorf("%s: rx %d, sysfs says %d (read after it)", i.Name, rx, w)
				}
			}
			t.Logf("%s on %s: rx %d tx %d", n.IP, i.Name, rx, tx)
			return
		}
	}
	t.Skip("no interface with a non-loopback address")
}
