package agentconfig

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
)

// ParseSize reads a byte count with an optional unit: B, KB/MB/GB (10^3)
// or KiB/MiB/GiB (2^10).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size such as 4MiB or 500KB", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q; use B, KB, MB, GB, KiB, MiB or GiB", s, unit)
	}
	return uint64(math.Round(v * mult)), nil
}

// CheckJoinAddr accepts "host" and "host:port" with a port in 1-65535.
func CheckJoinAddr(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = s, ""
	}
	if host == "" {
		return fmt.Errorf("no host; use host or host:port")
	}
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("port %q is not a number in 1-65535", port)
		}
	}
	return nil
}
