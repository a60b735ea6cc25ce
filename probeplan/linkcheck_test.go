package probeplan

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// chk is a check of peer at t0+sec, both ways at mbps, against a pair
// whose latest test read row both ways.
func chk(peer string, sec int, mbps, row float64) LinkCheck {
	return LinkCheck{Peer: peer, At: t0.Add(time.Duration(sec) * time.Second), OutMbps: mbps, InMbps: mbps, RowOutMbps: row, RowInMbps: row}
}

// retestedChk is chk against a pair whose latest test ended at t0+rowSec.
func retestedChk(peer string, sec int, mbps, row float64, rowSec int) LinkCheck {
	c := chk(peer, sec, mbps, row)
	c.RowAt = t0.Add(time.Duration(rowSec) * time.Second)
	return c
}

func TestJudgeLink(t *testing.T) {
	t.Parallel()
	cfg := DefaultLinkCheckConfig()
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	tests := []struct {
		name   string
		checks []LinkCheck
		want   LinkVerdict
	}{
		{name: "no checks"},
		{name: "agreeing checks, a check's burst and noise within the factors",
			checks: []LinkCheck{chk("b", 0, 94, 100), chk("c", 10, 131, 100), chk("d", 20, 61, 100)}},
		// degrade10: n02's link drops from 100 to 10 Mbit/s; a 256 KiB
		// half through a 64 KiB burst reads it at 13.
		{name: "a link at a tenth, seen against two peers",
			checks: []LinkCheck{chk("b", 0, 97, 100), chk("c", 10, 13.1, 100), chk("d", 20, 12.8, 98)},
			want:   LinkVerdict{Change: LinkSlower, Mbps: 13.1, Since: at(10), At: at(20)}},
		// degrade10 again: n02's pair with n10 was tested at 6.5 six
		// seconds after the change; a check towards n10 then reads 12,
		// which agrees with that test, not with the link's old rate,
		// while n02's other pairs still hold 100.
		{name: "a check agreeing with a pair tested since the change keeps the verdict",
			checks: []LinkCheck{chk("b", 0, 97, 100), chk("c", 10, 13.1, 100), chk("d", 20, 12.8, 98), retestedChk("n10", 30, 12, 6.5, 16)},
			want:   LinkVerdict{Change: LinkSlower, Mbps: 13.1, Since: at(10), At: at(20)}},
		{name: "a pair tested after the change but before the checks saw it",
			checks: []LinkCheck{chk("b", 0, 97, 100), chk("c", 10, 13.1, 100), chk("d", 20, 12.8, 98), retestedChk("n10", 30, 12, 6.5, 6)},
			want:   LinkVerdict{Change: LinkSlower, Mbps: 13.1, Since: at(10), At: at(20)}},
		{name: "pairs tested since the change, checked again and again, keep it",
			checks: []LinkCheck{chk("b", 0, 97, 100), chk("c", 10, 13.1, 100), chk("d", 20, 12.8, 98), retestedChk("n10", 30, 12, 6.5, 16),
				retestedChk("c", 40, 11, 9.8, 35), retestedChk("n10", 50, 12.5, 6.5, 16)},
			want: LinkVerdict{Change: LinkSlower, Mbps: 13.1, Since: at(10), At: at(20)}},
		{name: "a check agreeing with a pair tested before the checks last agreed ends it",
			checks: []LinkCheck{retestedChk("b", 0, 97, 100, -5), chk("c", 10, 13.1, 100), chk("d", 20, 12.8, 98),
				retestedChk("n10", 30, 12, 6.5, 16), retestedChk("e", 40, 96, 100, -50)}},
		{name: "a link back at its rate, read against pairs tested while it was slow",
			checks: []LinkCheck{chk("b", 0, 97, 100), chk("c", 10, 13.1, 100), chk("d", 20, 12.8, 98),
				retestedChk("c", 60, 95, 9.8, 35), retestedChk("d", 70, 93, 9.9, 36)},
			want: LinkVerdict{Change: LinkFaster, Mbps: 93, Since: at(60), At: at(70)}},
		{name: "one slow check is one slow peer, not this link",
			checks: []LinkCheck{chk("b", 0, 97, 100), chk("c", 10, 99, 100), chk("d", 20, 12.8, 98)}},
		{name: "the same slow peer twice is still one peer",
			checks: []LinkCheck{chk("c", 0, 13, 100), chk("c", 10, 12, 100)}},
		{name: "an agreeing check in between breaks the run",
			checks: []LinkCheck{chk("b", 0, 13, 100), chk("c", 10, 99, 100), chk("d", 20, 12.8, 98)}},
		{name: "a check without a figure is passed over",
			checks: []LinkCheck{chk("b", 0, 13, 100), chk("c", 10, 12, 0), chk("d", 20, 12.8, 98)},
			want:   LinkVerdict{Change: LinkSlower, Mbps: 13, Since: at(0), At: at(20)}},
		{name: "a link back at its rate after the pairs were tested at 10",
			checks: []LinkCheck{chk("b", 0, 13, 10), chk("c", 10, 95, 10), chk("d", 20, 92, 10)},
			want:   LinkVerdict{Change: LinkFaster, Mbps: 92, Since: at(10), At: at(20)}},
		{name: "slower then faster is no change",
			checks: []LinkCheck{chk("c", 10, 5, 100), chk("d", 20, 92, 10)}},
		{name: "the slower direction decides",
			checks: []LinkCheck{
				{Peer: "b", At: at(0), OutMbps: 98, InMbps: 9, RowOutMbps: 100, RowInMbps: 100},
				{Peer: "c", At: at(10), OutMbps: 97, InMbps: 11, RowOutMbps: 100, RowInMbps: 100}},
			want: LinkVerdict{Change: LinkSlower, Mbps: 11, Since: at(0), At: at(10)}},
		{name: "a pair measured one way only is judged that way",
			checks: []LinkCheck{
				{Peer: "b", At: at(0), OutMbps: 98, InMbps: 9, RowOutMbps: 100},
				{Peer: "c", At: at(10), OutMbps: 97, InMbps: 11, RowOutMbps: 100}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := JudgeLink(tt.checks, cfg); got != tt.want {
				t.Fatalf("JudgeLink = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestJudgeLink_confirm(t *testing.T) {
	t.Parallel()
	cfg := DefaultLinkCheckConfig()
	cfg.Confirm = 1
	if got := JudgeLink([]LinkCheck{chk("b", 0, 13, 100)}, cfg); got.Change != LinkSlower {
		t.Fatalf("Confirm 1: JudgeLink = %+v, want slower on one check", got)
	}
	cfg.Confirm = 3
	if got := JudgeLink([]LinkCheck{chk("b", 0, 13, 100), chk("c", 10, 13, 100)}, cfg); got.Change != "" {
		t.Fatalf("Confirm 3: JudgeLink = %+v, want none on two checks", got)
	}
}

func TestLinkCheckConfig_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mut     func(*LinkCheckConfig)
		wantErr string
	}{
		{name: "defaults", mut: func(*LinkCheckConfig) {}},
		{name: "off", mut: func(c *LinkCheckConfig) { c.Interval, c.Bytes = 0, 0 }},
		{name: "too often", mut: func(c *LinkCheckConfig) { c.Interval = 10 * time.Millisecond }, wantErr: "link check interval 10ms is below 1s"},
		{name: "too small", mut: func(c *LinkCheckConfig) { c.Bytes = 1000 }, wantErr: "link check bytes 1000 is outside"},
		{name: "slower share", mut: func(c *LinkCheckConfig) { c.Slower = 1 }, wantErr: "slower share 1 is outside (0, 1)"},
		{name: "faster factor", mut: func(c *LinkCheckConfig) { c.Faster = 0.9 }, wantErr: "faster factor 0.9 is not above 1"},
		{name: "confirm", mut: func(c *LinkCheckConfig) { c.Confirm = 0 }, wantErr: "confirm 0 is below 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultLinkCheckConfig()
			tt.mut(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The checks' cost comes off what the cycles may spend: the default
// check (512 KiB every 10 s, sent plus received, its own and a peer's)
// is 360 MiB an hour, which leaves a 1 GiB budget 13 tests of 4 MiB
// a cycle of 5 minutes, not 21.
func TestLinkCheck_budget(t *testing.T) {
	t.Parallel()
	lc := DefaultLinkCheckConfig()
	if got, want := lc.BytesPerHour(), uint64(360<<20); got != want {
		t.Fatalf("BytesPerHour = %d, want %d", got, want)
	}
	b := DefaultBudgetConfig()
	if got := b.TestsPerCycle(); got != 21 {
		t.Fatalf("TestsPerCycle without checks = %d, want 21", got)
	}
	b.CheckBytesPerHour = lc.BytesPerHour()
	if got := b.TestsPerCycle(); got != 13 {
		t.Fatalf("TestsPerCycle with checks = %d, want 13", got)
	}
	b.BytesPerHour = 400 << 20
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "less the link checks'") {
		t.Fatalf("Validate with checks over the budget = %v, want the checks named", err)
	}
	lc.Interval = 0
	if lc.BytesPerHour() != 0 {
		t.Fatal("a check that is off costs nothing")
	}
}

// TestLinkCheck_fitsTheBudget: the default checks (512 KiB every 10 s,
// 360 MiB an hour) run as configured under the default 1 GiB budget;
// under 400 MiB they stretch to half of it; under a budget the cycles
// need all of (48 MiB for a 4 MiB test every 5 minutes), or one that
// would stretch them past a cycle, they are off; with no cap they run.
func TestLinkCheck_fitsTheBudget(t *testing.T) {
	t.Parallel()
	c := DefaultLinkCheckConfig()
	b := DefaultBudgetConfig()
	for _, tc := range []struct {
		budget uint64
		want   time.Duration
	}{
		{1 << 30, 10 * time.Second},
		{0, 10 * time.Second},
		{400 << 20, 18 * time.Second}, // 2 × 512 KiB within 200 MiB an hour: every 18 s
		{48 << 20, 0},
		{60 << 20, 0}, // 12 MiB left an hour: a check every 5 minutes, no more often than the cycle
	} {
		b.BytesPerHour = tc.budget
		got := c.FitTo(b)
		if got.Interval != tc.want {
			t.Errorf("budget %d MiB/h: checks every %s, want %s", tc.budget>>20, got.Interval, tc.want)
		}
		if tc.budget > 0 && got.BytesPerHour() > tc.budget/2 {
			t.Errorf("budget %d MiB/h: checks take %d MiB/h, more than half", tc.budget>>20, got.BytesPerHour()>>20)
		}
		b.CheckBytesPerHour = got.BytesPerHour()
		if err := b.Validate(); err != nil {
			t.Errorf("budget %d MiB/h with the fitted checks: %v", tc.budget>>20, err)
		}
		b.CheckBytesPerHour = 0
	}
}

// TestLinkCheck_NextCheckIn: the waits between checks are drawn within
// half an interval either side, average the interval (what the budget
// counts), and differ from one check to the next.
func TestLinkCheck_NextCheckIn(t *testing.T) {
	t.Parallel()
	cfg := DefaultLinkCheckConfig()
	r := rand.New(rand.NewPCG(1, 2))
	var sum time.Duration
	seen := map[time.Duration]bool{}
	const n = 1000
	for range n {
		d := cfg.NextCheckIn(r)
		if d < cfg.Interval/2 || d >= cfg.Interval*3/2 {
			t.Fatalf("wait %s outside [%s, %s)", d, cfg.Interval/2, cfg.Interval*3/2)
		}
		sum += d
		seen[d] = true
	}
	if mean := sum / n; mean < cfg.Interval*95/100 || mean > cfg.Interval*105/100 {
		t.Fatalf("mean wait %s, want about %s", mean, cfg.Interval)
	}
	if len(seen) < n/2 {
		t.Fatalf("%d different waits in %d: want them drawn, not fixed", len(seen), n)
	}
	cfg.Interval = 0
	if d := cfg.NextCheckIn(r); d != 0 {
		t.Fatalf("check off: wait %s, want 0", d)
	}
}
