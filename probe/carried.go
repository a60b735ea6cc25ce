package probe

import (
	"context"
	"fmt"
	"net"
	"time"

	gnet "github.com/shirou/gopsutil/v3/net"
)

// Counters reads one interface's byte counters: bytes received and sent
// since it came up. A bandwidth test reads them around each half to learn
// what else its end's link carried meanwhile (BandwidthResult.Carried).
type Counters func() (rx, tx uint64, err error)

// CounterSource gives the counters of the interface a connection's local
// address is on, nil when none are to be read.
type CounterSource func(local net.Addr) Counters

// InterfaceCounters is the CounterSource of the kernel: the interface
// that holds the connection's local IP, its counters read from
// /proc/net/dev (gopsutil, as the node-state sampler reads them). Only
// that interface: on a bonded, VLAN or bridged host a byte crosses two
// interfaces (bond0 and its member, eth0.100 and eth0, br0 and its
// port), and a sum would count the test itself as traffic besides it.
// Nil for a loopback address (an in-process test cluster: its tests cross
// no link) and for an address no interface holds.
func InterfaceCounters(local net.Addr) Counters {
	ta, ok := local.(*net.TCPAddr)
	if !ok {
		return nil
	}
	name, ok := interfaceOf(ta.IP)
	if !ok {
		return nil
	}
	return func() (rx, tx uint64, err error) {
		cs, err := gnet.IOCountersWithContext(context.Background(), true)
		if err != nil {
			return 0, 0, fmt.Errorf("read network counters: %w", err)
		}
		for _, c := range cs {
			if c.Name == name {
				return c.BytesRecv, c.BytesSent, nil
			}
		}
		return 0, 0, fmt.Errorf("read network counters: interface %s is gone", name)
	}
}

// interfaceOf names the non-loopback interface that holds ip.
func interfaceOf(ip net.IP) (string, bool) {
	if ip == nil || ip.IsLoopback() {
		return "", false
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return "", false
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return i.Name, true
			}
		}
	}
	return "", false
}

// wireOverhead is what the counters see per byte of test payload at
// most: TCP/IP and Ethernet headers on every 1448-byte segment (4.6 %)
// and TLS records (0.2 %). Offloads that count one header per 64 KiB
// super-packet (veth, GSO) see less; taking the most understates the
// other traffic by up to 5 % of the test's rate, and too little given
// back is the safe side (leader/stamp.go).
const wireOverhead = 1.05

// halfCounter reads one direction of an end's counters around one half
// of a test: its own payload is taken off what crossed, the rest is the
// traffic the end carried besides the test.
type halfCounter struct {
	read   Counters
	now    func() time.Time
	rx     bool // which direction: received (the half's receiver) or sent
	before uint64
	start  time.Time
	ok     bool
}

func startHalf(c Counters, now func() time.Time, rx bool) halfCounter {
	h := halfCounter{read: c, now: now, rx: rx}
	if c == nil {
		return h
	}
	r, t, err := c()
	if err != nil {
		return h
	}
	h.before, h.start, h.ok = pick(r, t, rx), now(), true
	return h
}

func pick(rx, tx uint64, wantRx bool) uint64 {
	if wantRx {
		return rx
	}
	return tx
}

// carried ends the half: the half's rate plus the other traffic the end
// moved the same way over the half, Mbit/s; payload is the test bytes
// this end moved in it. 0 when the counters could not be read, went
// backwards (an interface went away), or the rate is not known.
func (h halfCounter) carried(rate float64, payload uint64) float64 {
	if !h.ok || !(rate > 0) {
		return 0
	}
	r, t, err := h.read()
	window := h.now().Sub(h.start)
	after := pick(r, t, h.rx)
	if err != nil || after < h.before || window <= 0 {
		return 0
	}
	return rate + otherMbps(after-h.before, payload, window)
}

// otherMbps is the rate of the bytes that crossed besides payload's
// (with its headers, wireOverhead) over window, in Mbit/s; never below 0.
func otherMbps(crossed, payload uint64, window time.Duration) float64 {
	other := float64(crossed) - float64(payload)*wireOverhead
	if other <= 0 || window <= 0 {
		return 0
	}
	return other * 8 / window.Seconds() / 1e6
}
