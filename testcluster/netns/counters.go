package netns

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Counters are the loss counters of a testbed: what a run's TCP traffic
// met on the shaped links. They are cumulative since Up; subtract two
// readings for an interval.
type Counters struct {
	// Retrans, Timeouts and LossProbes are TCP's retransmitted segments,
	// retransmission timeouts (TcpExtTCPTimeouts: the RTO fired, the
	// sender sat idle for at least 200 ms) and tail loss probes, summed
	// over the nodes asked for.
	Retrans, Timeouts, LossProbes uint64
	// Drops are packets the tbf queues dropped: both ends of the nodes'
	// links and every uplink.
	Drops uint64
}

// Sub returns c minus an earlier reading.
func (c Counters) Sub(earlier Counters) Counters {
	return Counters{Retrans: c.Retrans - earlier.Retrans, Timeouts: c.Timeouts - earlier.Timeouts,
		LossProbes: c.LossProbes - earlier.LossProbes, Drops: c.Drops - earlier.Drops}
}

// Counters reads the TCP loss counters of nodes' namespaces (every node
// when nodes is empty) and the tbf drops of every shaped link.
func (tb *Testbed) Counters(ctx context.Context, nodes ...string) (Counters, error) {
	if len(nodes) == 0 {
		for _, n := range tb.Nodes() {
			nodes = append(nodes, n.Name)
		}
	}
	var c Counters
	seen := map[string]bool{}
	for _, name := range nodes {
		if seen[name] {
			continue
		}
		seen[name] = true
		n, ok := tb.nodes[name]
		if !ok {
			return Counters{}, fmt.Errorf("counters of %q: %w", name, ErrUnknownNode)
		}
		// /proc/net follows the reader's network namespace.
		out, err := run(ctx, "ip", "netns", "exec", n.Namespace, "cat", "/proc/net/snmp", "/proc/net/netstat")
		if err != nil {
			return Counters{}, fmt.Errorf("counters of %s: %w", name, err)
		}
		v := parseProcNet(out)
		c.Retrans += v["Tcp:RetransSegs"]
		c.Timeouts += v["TcpExt:TCPTimeouts"]
		c.LossProbes += v["TcpExt:TCPLossProbes"]
		d, err := tb.qdiscDrops(ctx, n.Namespace)
		if err != nil {
			return Counters{}, err
		}
		c.Drops += d
	}
	// The fabric holds every node's inbound shaping and the uplinks.
	d, err := tb.qdiscDrops(ctx, tb.names.fabric())
	if err != nil {
		return Counters{}, err
	}
	c.Drops += d
	return c, nil
}

func (tb *Testbed) qdiscDrops(ctx context.Context, ns string) (uint64, error) {
	out, err := run(ctx, "tc", "-n", ns, "-s", "qdisc", "show")
	if err != nil {
		return 0, fmt.Errorf("qdisc drops in %s: %w", ns, err)
	}
	return parseTbfDrops(out), nil
}

// parseProcNet reads /proc/net/snmp or /proc/net/netstat: pairs of lines,
// a header "Proto: name name ..." and "Proto: value value ...", into
// "Proto:name" -> value. Negative or unparsable values are skipped.
func parseProcNet(s string) map[string]uint64 {
	out := map[string]uint64{}
	var header []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if header == nil || header[0] != f[0] {
			header = f
			continue
		}
		for i := 1; i < len(f) && i < len(header); i++ {
			if v, err := strconv.ParseUint(f[i], 10, 64); err == nil {
				out[f[0]+header[i]] = v
			}
		}
		header = nil
	}
	return out
}

var tbfStats = regexp.MustCompile(`(?m)^qdisc tbf [^\n]*\n\s*Sent \d+ bytes \d+ pkt \(dropped (\d+),`)

// parseTbfDrops sums the dropped counts of the tbf qdiscs in `tc -s qdisc
// show` output (other qdiscs drop nothing the shaping caused).
func parseTbfDrops(s string) uint64 {
	var sum uint64
	for _, m := range tbfStats.FindAllStringSubmatch(s, -1) {
		v, _ := strconv.ParseUint(m[1], 10, 64)
		sum += v
	}
	return sum
}
