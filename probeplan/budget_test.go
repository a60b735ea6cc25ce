package probeplan

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestBudgetConfig_Validate(t *testing.T) {
	t.Parallel()
	def := DefaultBudgetConfig()
	tests := []struct {
		name    string
		mut     func(*BudgetConfig)
		wantErr string
	}{
		{name: "defaults", mut: func(*BudgetConfig) {}},
		{name: "no cap", mut: func(c *BudgetConfig) { c.BytesPerHour = 0 }},
		{name: "tiny test", mut: func(c *BudgetConfig) { c.TestBytes = 1000 }, wantErr: "TestBytes = 1000, want 65536..1073741824"},
		{name: "cycle too short", mut: func(c *BudgetConfig) { c.CycleInterval = time.Millisecond }, wantErr: "CycleInterval = 1ms, want >= 1s"},
		{name: "budget below one test per cycle", mut: func(c *BudgetConfig) { c.BytesPerHour = 1 << 20 },
			wantErr: "BytesPerHour = 1048576 allows less than one 4194304-byte test per node every 5m0s; want 0 (no cap) or >= 50331648"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := def
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

func TestBudgetConfig_TestsPerCycle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  BudgetConfig
		want int
	}{
		{name: "defaults: 1 GiB/h, 4 MiB, 5 min", cfg: DefaultBudgetConfig(), want: 21},
		{name: "no cap", cfg: BudgetConfig{TestBytes: 4 << 20, CycleInterval: time.Minute}, want: math.MaxInt},
		{name: "exactly 2 per cycle", cfg: BudgetConfig{BytesPerHour: 24 << 20, TestBytes: 1 << 20, CycleInterval: 5 * time.Minute}, want: 2},
		{name: "too small still gets one", cfg: BudgetConfig{BytesPerHour: 1, TestBytes: 1 << 20, CycleInterval: 5 * time.Minute}, want: 1},
		{name: "huge", cfg: BudgetConfig{BytesPerHour: math.MaxUint64, TestBytes: 1 << 16, CycleInterval: time.Hour}, want: math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.cfg.TestsPerCycle(); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// The simulated hour must respect the budget at every size.
func TestTrafficPerHour_WithinBudget(t *testing.T) {
	t.Parallel()
	cfg := DefaultBudgetConfig()
	for _, n := range []int{2, 8, 23, 32, 128} {
		tr := TrafficPerHour(n, cfg)
		if tr.MaxBytesPerNodeHour > cfg.BytesPerHour {
			t.Errorf("n=%d: busiest node moves %d B/h, budget %d", n, tr.MaxBytesPerNodeHour, cfg.BytesPerHour)
		}
		if tr.CyclesToCover == 0 {
			t.Errorf("n=%d: never covered every pair", n)
		}
	}
	// Small clusters are not capped: a full tournament every cycle.
	if tr := TrafficPerHour(8, cfg); tr.TestsPerNode != 7 || tr.CyclesToCover != 1 || tr.MaxBytesPerNodeHour != 12*7*cfg.TestBytes {
		t.Errorf("n=8: %+v", tr)
	}
}

// ExampleTrafficPerHour prints the probe traffic per node per hour under
// the default budget (1 GiB/h per node, 4 MiB tests, a cycle every
// 5 min), how long until every pair has a bandwidth value, and the time
// the rounds of one cycle take at an assumed 1 Gbit/s with 5 ms of setup
// per test. Run it with:
//
//	go test -run ExampleTrafficPerHour -v ./probeplan/
func ExampleTrafficPerHour() {
	cfg := DefaultBudgetConfig()
	fmt.Println("nodes  tests/node/cycle  rounds  MiB/node/hour(max)  all pairs measured after  cycle time @1Gbit/s")
	for _, n := range []int{8, 32, 128} {
		tr := TrafficPerHour(n, cfg)
		fmt.Printf("%5d  %16d  %6d  %18d  %24s  %19s\n", n, tr.TestsPerNode, tr.Rounds,
			tr.MaxBytesPerNodeHour>>20, tr.CoverTime, tr.CycleTime(cfg, 1e9, 5*time.Millisecond).Round(time.Millisecond))
	}
	// Output:
	// nodes  tests/node/cycle  rounds  MiB/node/hour(max)  all pairs measured after  cycle time @1Gbit/s
	//     8                 7       7                 336                      5m0s                270ms
	//    32                21      31                1008                     15m0s               1.195s
	//   128                21      31                1008                     45m0s               1.195s
}

func BenchmarkPlanCycle(b *testing.B) {
	cfg := DefaultBudgetConfig()
	for _, n := range []int{8, 32, 128} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := nodeNames(n)
			last := map[Pair]time.Time{}
			for b.Loop() {
				PlanCycle(m, last, cfg, t0)
			}
			tr := TrafficPerHour(n, cfg)
			b.ReportMetric(float64(tr.MaxBytesPerNodeHour)/(1<<20), "MiB/node/h")
			b.ReportMetric(float64(tr.Rounds), "rounds/cycle")
		})
	}
}
