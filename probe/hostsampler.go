package probe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/host"
	"github.com/shirou/gopsutil/v3/load"
	"github.com/shirou/gopsutil/v3/mem"
	gnet "github.com/shirou/gopsutil/v3/net"
)

// HostSampler reads the real machine with gopsutil; no external commands.
//
// CPU utilisation is computed from the CPU time counters this sampler saw
// on its previous call, not with cpu.Percent(0): that keeps its baseline
// in one package-wide variable, so two samplers in one process (an
// in-process test cluster runs several agents) would reset each other's
// interval. The first call reports utilisation since boot.
type HostSampler struct {
	// Now stamps samples. Default time.Now.
	Now func() time.Time

	mu       sync.Mutex
	prevCPU  cpu.TimesStat
	havePrev bool
	// prevNet is each counted interface's counters at the last sample
	// (nil before the first); netRx and netTx the running totals addNet
	// reports.
	prevNet      map[string]gnet.IOCountersStat
	netRx, netTx uint64
}

var _ Sampler = (*HostSampler)(nil)

// NewHostSampler returns a sampler of this machine.
func NewHostSampler() *HostSampler { return &HostSampler{Now: time.Now} }

// Sample implements Sampler. It is safe for concurrent use.
func (h *HostSampler) Sample(ctx context.Context) (RawSample, error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	s := RawSample{At: now()}

	avg, err := load.AvgWithContext(ctx)
	if err != nil {
		return RawSample{}, fmt.Errorf("read load average: %w", err)
	}
	s.Load1 = avg.Load1

	times, err := cpu.TimesWithContext(ctx, false)
	if err != nil {
		return RawSample{}, fmt.Errorf("read CPU times: %w", err)
	}
	if len(times) == 0 {
		return RawSample{}, errors.New("read CPU times: no aggregate counter")
	}
	h.mu.Lock()
	prev := h.prevCPU
	if !h.havePrev {
		prev = cpu.TimesStat{} // since boot
	}
	h.prevCPU, h.havePrev = times[0], true
	h.mu.Unlock()
	s.CPUUtil = cpuBusyPercent(prev, times[0])

	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return RawSample{}, fmt.Errorf("read memory: %w", err)
	}
	s.MemAvail = vm.Available

	counters, err := gnet.IOCountersWithContext(ctx, true)
	if err != nil {
		return RawSample{}, fmt.Errorf("read network counters: %w", err)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		ifs = nil // loopback by name alone: every other interface counts
	}
	h.mu.Lock()
	s.RxBytes, s.TxBytes = h.addNet(counters, uncountedInterfaces(sysClassNet, ifs))
	h.mu.Unlock()
	s.NetBytes = s.RxBytes + s.TxBytes

	users, err := host.UsersWithContext(ctx)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No utmp (containers, minimal images): nobody logged in.
	case err != nil:
		return RawSample{}, fmt.Errorf("read logged-in users: %w", err)
	}
	s.Users = len(users)
	return s, nil
}

// addNet folds one reading of the interface counters into the running
// totals of bytes received and sent, and returns them: at the first
// reading what the counted interfaces (those not in skip) have moved so
// far, after it what each moved since the last reading. An interface not
// counted at the last reading (new, or counted now that the set changed)
// adds nothing this time, and one whose counter went back (a reset) adds
// nothing either, so a change in which interfaces count never reads as a
// burst: when a NIC goes away for a moment and the bridge over it counts
// instead, the bridge's lifetime bytes are not added at once.
func (h *HostSampler) addNet(counters []gnet.IOCountersStat, skip map[string]bool) (rx, tx uint64) {
	first := h.prevNet == nil
	cur := make(map[string]gnet.IOCountersStat, len(counters))
	for _, c := range counters {
		if skip[c.Name] || c.Name == "all" {
			continue
		}
		cur[c.Name] = c
		p, seen := h.prevNet[c.Name]
		switch {
		case first:
			h.netRx, h.netTx = h.netRx+c.BytesRecv, h.netTx+c.BytesSent
		case seen:
			if c.BytesRecv >= p.BytesRecv {
				h.netRx += c.BytesRecv - p.BytesRecv
			}
			if c.BytesSent >= p.BytesSent {
				h.netTx += c.BytesSent - p.BytesSent
			}
		}
	}
	h.prevNet = cur
	return h.netRx, h.netTx
}

// cpuBusyPercent is the share of CPU time not spent idle or waiting for
// I/O between two readings of the aggregate counters. A counter that went
// backwards (CPU hot-unplug) gives 0 rather than a negative percentage.
func cpuBusyPercent(prev, cur cpu.TimesStat) float64 {
	// Guest time is already inside User and Nice on Linux; adding it
	// would count it twice.
	total := func(t cpu.TimesStat) float64 {
		return t.User + t.Nice + t.System + t.Idle + t.Iowait + t.Irq + t.Softirq + t.Steal
	}
	idle := func(t cpu.TimesStat) float64 { return t.Idle + t.Iowait }
	dTotal := total(cur) - total(prev)
	dIdle := idle(cur) - idle(prev)
	if dTotal <= 0 {
		return 0
	}
	busy := (dTotal - dIdle) / dTotal * 100
	return min(max(busy, 0), 100)
}

// sysClassNet lists the network interfaces of the namespace that mounted
// sysfs, each with its ifindex and, for a physical one, its device.
const sysClassNet = "/sys/class/net"

// uncountedInterfaces names the interfaces (of ifs, this namespace's) whose
// bytes a node's traffic leaves out. Loopback always: local traffic says
// nothing about the network. And when the node has a physical interface
// (a NIC, virtio's included: sysfs gives it a device), every virtual one:
// a bridge, bond, VLAN, veth or tunnel carries bytes a physical interface
// counts too (the host's own traffic crosses br0 and the eth0 under it, a
// bond's crosses its slaves), and a container's traffic to another on the
// same host crosses no link at all. Summing every interface counted such
// a node's traffic twice and called its link busier than it was. With no
// physical interface (a container's veth, a network namespace of the
// testbed) every interface but loopback counts, as before. sysfs counts
// only when it is this namespace's: an interface whose ifindex there is
// not its own (or whose hardware address is another's) is taken as
// virtual.
func uncountedInterfaces(sysNet string, ifs []net.Interface) map[string]bool {
	skip := map[string]bool{"lo": true}
	var virtual []string
	physical := false
	for _, i := range ifs {
		switch {
		case i.Flags&net.FlagLoopback != 0:
			skip[i.Name] = true
		case isPhysical(sysNet, i):
			physical = true
		default:
			virtual = append(virtual, i.Name)
		}
	}
	if physical {
		for _, n := range virtual {
			skip[n] = true
		}
	}
	return skip
}

// isPhysical reports whether sysNet shows i, by its own ifindex and
// hardware address, with a device behind it.
func isPhysical(sysNet string, i net.Interface) bool {
	dir := filepath.Join(sysNet, i.Name)
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "\x00" // matches nothing
		}
		return strings.TrimSpace(string(b))
	}
	if read("ifindex") != strconv.Itoa(i.Index) || !strings.EqualFold(read("address"), i.HardwareAddr.String()) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "device"))
	return err == nil
}

var _ TrafficCounter = (*HostSampler)(nil)

// Traffic implements TrafficCounter: the bytes the interfaces a sample
// counts have received and sent so far. It reads the counters only and
// leaves Sample's running totals alone.
func (h *HostSampler) Traffic(ctx context.Context) (rx, tx uint64, err error) {
	counters, err := gnet.IOCountersWithContext(ctx, true)
	if err != nil {
		return 0, 0, fmt.Errorf("read network counters: %w", err)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		ifs = nil
	}
	skip := uncountedInterfaces(sysClassNet, ifs)
	for _, c := range counters {
		if !skip[c.Name] && c.Name != "all" {
			rx, tx = rx+c.BytesRecv, tx+c.BytesSent
		}
	}
	return rx, tx, nil
}
