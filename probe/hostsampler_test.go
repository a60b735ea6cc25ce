package probe

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	gnet "github.com/shirou/gopsutil/v3/net"
	"github.com/shoal-hpc/shoal/nodestate"
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

// TestUncountedInterfaces: beside a NIC, a bridge, a bond, a VLAN or a
// veth is left out of the node's traffic (the NIC counts its bytes, or
// they never cross a link); without one, everything but loopback counts.
// The sysfs tree is written by the test: a physical NIC is the boundary
// this machine cannot give a namespace (a fake named as such).
func TestUncountedInterfaces(t *testing.T) {
	t.Parallel()
	sys := t.TempDir()
	iface := func(name string, index int, device bool) net.Interface {
		dir := filepath.Join(sys, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, byte(index)}
		if err := os.WriteFile(filepath.Join(dir, "ifindex"), []byte(fmt.Sprintf("%d\n", index)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "address"), []byte(mac.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if device {
			if err := os.Mkdir(filepath.Join(dir, "device"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return net.Interface{Name: name, Index: index, HardwareAddr: mac}
	}
	lo := iface("lo", 1, false)
	lo.Flags = net.FlagLoopback
	eth0, eth1 := iface("eth0", 2, true), iface("eth1", 3, true)
	bond0, br0, vlan, veth := iface("bond0", 4, false), iface("br0", 5, false), iface("bond0.100", 6, false), iface("veth1", 7, false)
	other := iface("ens9", 8, true)
	other.Index = 42 // sysfs shows another namespace's ens9
	twin := iface("eth5", 9, true)
	twin.HardwareAddr = net.HardwareAddr{0xaa, 0, 0, 0, 0, 1} // same name and ifindex, another namespace's NIC

	tests := []struct {
		name string
		ifs  []net.Interface
		want []string
	}{
		{"bonded NICs under a bridge and a VLAN", []net.Interface{lo, eth0, eth1, bond0, br0, vlan, veth}, []string{"bond0", "bond0.100", "br0", "lo", "veth1"}},
		{"veths alone: a container, a testbed node", []net.Interface{lo, bond0, veth}, []string{"lo"}},
		{"sysfs of another namespace", []net.Interface{lo, other, veth}, []string{"lo"}},
		{"another namespace's NIC under the same name and index", []net.Interface{lo, twin, veth}, []string{"lo"}},
		{"no interface list", nil, []string{"lo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := slices.Sorted(maps.Keys(uncountedInterfaces(sys, tt.ifs)))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("uncounted %v, want %v", got, tt.want)
			}
		})
	}
	counters := []gnet.IOCountersStat{{Name: "lo", BytesRecv: 1e9}, {Name: "eth0", BytesRecv: 100, BytesSent: 10},
		{Name: "eth1", BytesRecv: 50, BytesSent: 5}, {Name: "bond0", BytesRecv: 150, BytesSent: 15}, {Name: "br0", BytesRecv: 150, BytesSent: 15}}
	var h HostSampler
	rx, tx := h.addNet(counters, uncountedInterfaces(sys, []net.Interface{lo, eth0, eth1, bond0, br0}))
	if rx != 150 || tx != 15 {
		t.Fatalf("bonded host: rx %d tx %d, want the slaves' 150 and 15 once", rx, tx)
	}
}

// TestHostSampler_AddNet: the totals grow by what each counted interface
// moved since the last reading, so a change in which interfaces count (a
// NIC gone for a moment, the bridge over it counted meanwhile) or a
// counter reset reads as no traffic, not as a lifetime's bytes at once.
func TestHostSampler_AddNet(t *testing.T) {
	t.Parallel()
	var h HostSampler
	read := func(skip map[string]bool, cs ...gnet.IOCountersStat) uint64 {
		rx, tx := h.addNet(cs, skip)
		return rx + tx
	}
	nic := map[string]bool{"lo": true, "br0": true}
	if got := read(nic, gnet.IOCountersStat{Name: "eth0", BytesRecv: 1000, BytesSent: 100}, gnet.IOCountersStat{Name: "br0", BytesRecv: 9e9},
		gnet.IOCountersStat{Name: "lo", BytesRecv: 1e9, BytesSent: 1e9}, gnet.IOCountersStat{Name: "all", BytesRecv: 1e12}); got != 1100 {
		t.Fatalf("first reading: %d, want eth0's 1100 so far (not br0, loopback or gopsutil's \"all\")", got)
	}
	if got := read(nic, gnet.IOCountersStat{Name: "eth0", BytesRecv: 1500, BytesSent: 150}); got != 1650 {
		t.Fatalf("second reading: %d, want 1650", got)
	}
	// eth0 gone: br0 counts from now on, and adds nothing this time.
	if got := read(map[string]bool{"lo": true}, gnet.IOCountersStat{Name: "br0", BytesRecv: 9e9 + 500}); got != 1650 {
		t.Fatalf("NIC gone: %d, want 1650 (br0 newly counted adds nothing)", got)
	}
	if got := read(map[string]bool{"lo": true}, gnet.IOCountersStat{Name: "br0", BytesRecv: 9e9 + 800}); got != 1950 {
		t.Fatalf("br0's next reading: %d, want 1950", got)
	}
	if got := read(map[string]bool{"lo": true}, gnet.IOCountersStat{Name: "br0", BytesRecv: 10}); got != 1950 {
		t.Fatalf("counter reset: %d, want 1950", got)
	}
}

// TestUncountedInterfaces_ThisMachine: on the real /sys, loopback is left
// out and a NIC this machine has (virtio's eth0 here) is counted.
func TestUncountedInterfaces_ThisMachine(t *testing.T) {
	t.Parallel()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	skip := uncountedInterfaces(sysClassNet, ifs)
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 && !skip[i.Name] {
			t.Errorf("loopback %s counted", i.Name)
		}
		if _, err := os.Stat(filepath.Join(sysClassNet, i.Name, "device")); err == nil && skip[i.Name] {
			t.Errorf("%s has a device in sysfs but is not counted", i.Name)
		}
	}
}

// TestHostSampler_ThisMachine reads the real machine twice through gopsutil
// and feeds a Tracker, as the agent does.
func TestHostSampler_ThisMachine(t *testing.T) {
	t.Parallel()
	clock := t0
	h := &HostSampler{Now: func() time.Time { clock = clock.Add(3 * time.Second); return clock }}
	tr := NewTracker()
	var d nodestate.Dynamic
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
