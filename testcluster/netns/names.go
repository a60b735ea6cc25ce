package netns

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Family begins the name of everything any testbed creates: namespaces
// (/run/netns), interfaces, owner files. Sweep(Family) removes every
// testbed of this machine; an instance prefix is Family plus two hex digits
// (the third octet of its subnet), e.g. "snt1a".
const Family = "snt"

// subnetBase is the private range owned by the testbeds: instance i uses
// 10.213.i.0/24. No route leaves a node namespace, so nothing is ever sent
// outside the namespaces a testbed created.
var subnetBase = netip.MustParseAddr("10.213.0.0")

// ownerDir holds one owner file per live instance, named by its prefix and
// holding the owner's pid and start time; creating it with O_EXCL is what
// allocates a prefix (and with it a subnet).
const ownerDir = "/run/shoal-netns"

// netnsDir and etcNetnsDir are where iproute2 keeps named namespaces and
// their per-namespace /etc overrides (ip netns exec bind-mounts
// /etc/netns/NS/hosts over /etc/hosts).
const (
	netnsDir    = "/run/netns"
	etcNetnsDir = "/etc/netns"
)

// names derives every name of one instance from its prefix. Interface names
// stay well under Linux's 15-byte limit: prefix (5) + kind (1) + index (<=3) + side (1).
type names struct{ prefix string }

func (n names) fabric() string              { return n.prefix + "_fab" }
func (n names) nodeNS(node string) string   { return n.prefix + "-" + node }
func (n names) bridge(i int) string         { return fmt.Sprintf("%ss%d", n.prefix, i) }
func (n names) port(i int) string           { return fmt.Sprintf("%sn%d", n.prefix, i) }
func (n names) uplink(i int, s byte) string { return fmt.Sprintf("%su%d%c", n.prefix, i, s) }

// subnet returns 10.213.idx.0/24.
func subnet(idx int) netip.Prefix {
	b := subnetBase.As4()
	b[2] = byte(idx)
	return netip.PrefixFrom(netip.AddrFrom4(b), 24)
}

// hostIP returns the i-th host address (.1 based) of a /24.
func hostIP(p netip.Prefix, i int) netip.Addr {
	b := p.Addr().As4()
	b[3] = byte(i + 1)
	return netip.AddrFrom4(b)
}

// instanceIndex parses the subnet index out of a name beginning with an
// instance prefix.
func instanceIndex(name string) (int, bool) {
	if !strings.HasPrefix(name, Family) || len(name) < len(Family)+2 {
		return 0, false
	}
	v, err := strconv.ParseUint(name[len(Family):len(Family)+2], 16, 8)
	if err != nil {
		return 0, false
	}
	return int(v), true
}

var allocMu sync.Mutex

// allocatePrefix claims a free instance prefix by creating its owner file
// with O_EXCL, so two processes never get the same one.
func allocatePrefix() (string, error) {
	allocMu.Lock()
	defer allocMu.Unlock()
	if err := os.MkdirAll(ownerDir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", ownerDir, err)
	}
	used := map[int]bool{}
	for _, dir := range []string{ownerDir, netnsDir, etcNetnsDir, nsFileDir} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if i, ok := instanceIndex(e.Name()); ok {
				used[i] = true
			}
		}
	}
	owner := ownerRecord()
	for _, i := range rand.Perm(256) {
		if used[i] {
			continue
		}
		prefix := fmt.Sprintf("%s%02x", Family, i)
		f, err := os.OpenFile(filepath.Join(ownerDir, prefix), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			continue // taken meanwhile by another process
		}
		_, werr := f.WriteString(owner)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("write owner file %s: %w", f.Name(), werr)
		}
		return prefix, nil
	}
	return "", fmt.Errorf("all 256 testbed subnets of %s/16 are in use; run Sweep(%q) if they are leftovers", subnetBase, Family)
}

// ownerRecord identifies this process: pid and start time (so a reused pid
// is not mistaken for the owner).
func ownerRecord() string {
	pid := os.Getpid()
	return fmt.Sprintf("%d %s\n", pid, procStartTime(pid))
}

// procStartTime returns field 22 of /proc/PID/stat, or "" if the process is gone.
func procStartTime(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(data)
	// The command name (field 2) may hold spaces; fields restart after its ')'.
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// ownerAlive reports whether the owner recorded for prefix still runs.
func ownerAlive(prefix string) bool {
	data, err := os.ReadFile(filepath.Join(ownerDir, prefix))
	if err != nil {
		return false
	}
	var pid int
	var start string
	if _, err := fmt.Sscan(string(data), &pid, &start); err != nil {
		return false
	}
	return procStartTime(pid) == start
}
