package probe

import (
	"context"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	gnet "github.com/shirou/gopsutil/v3/net"
)

func TestCPUBusyPercent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		prev, cur cpu.TimesStat
		want      float64
	}{
		{name: "half busy", prev: cpu.TimesStat{User: 10, Idle: 10}, cur: cpu.TimesStat{User: 15, Idle: 15}, want: 50},
		{name: "iowait is idle", prev: cpu.TimesStat{}, cur: cpu.TimesStat{System: 1, Iowait: 3}, want: 25},
		{name: "steal and irq are busy", prev: cpu.TimesStat{}, cur: cpu.TimesStat{Steal: 1, Irq: 1, Softirq: 1, Idle: 1}, want: 75},
		{name: "guest not counted twice", prev: cpu.TimesStat{}, cur: cpu.TimesStat{User: 2, Guest: 2, Idle: 2}, want: 50},
		{name: "no time passed", prev: cpu.TimesStat{User: 5}, cur: cpu.TimesStat{User: 5}, want: 0},
		{name: "counters went backwards", prev: cpu.TimesStat{User: 9, Idle: 9}, cur: cpu.TimesStat{User: 1, Idle: 1}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := cpuBusyPercent(tt.prev, tt.cur); !approx(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSumNonLoopback(t *testing.T) {
	t.Parallel()
	counters := []gnet.IOCountersStat{
		{Name: "lo", BytesRecv: 1e9, BytesSent: 1e9},
		{Name: "eth0", BytesRecv: 100, BytesSent: 20},
		{Name: "veth1", BytesRecv: 3, BytesSent: 4},
		{Name: "lo2", BytesRecv: 5, BytesSent: 5},
	}
	tests := []struct {
		name     string
		loopback map[string]bool
		want     uint64
	}{
		{name: "lo only", loopback: map[string]bool{"lo": true}, want: 137},
		{name: "two loopbacks", loopback: map[string]bool{"lo": true, "lo2": true}, want: 127},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := sumNonLoopback(counters, tt.loopback); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestHostSampler_ThisMachine reads the real machine twice through gopsutil
// and feeds a Tracker, as the agent does.
func TestHostSampler_ThisMachine(t *testing.T) {
	t.Parallel()
	clock := t0
	h := &HostSampler{Now: func() time.Time { clock = clock.Add(3 * time.Second); return clock }}
	tr := NewTracker()
	var d Dynamic
	for range 2 {
		s, err := h.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.MemAvail == 0 || s.Load1 < 0 || s.CPUUtil < 0 || s.CPUUtil > 100 || s.Users < 0 {
			t.Fatalf("implausible sample: %+v", s)
		}
		d = tr.Add(s)
	}
	if d.MemAvail.M1 <= 0 || d.NetFlow.Now < 0 {
		t.Errorf("implausible dynamic state: %+v", d)
	}
	t.Logf("this machine: %+v", d)
}
