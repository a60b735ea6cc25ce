package netns

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Up builds the topology on this host and returns the running testbed:
// a fabric namespace holding one bridge per switch and the uplinks, and one
// namespace per node whose eth0 is a veth into its switch's bridge, shaped
// with tbf in both directions. Addresses come from the instance's /24 of
// 10.213.0.0/16; no namespace has a default route. Background flows and CPU
// hogs are started before Up returns.
//
// Up needs root and iproute2 (see [Available]). On error everything created
// so far is torn down. The testbed is also torn down on SIGINT/SIGTERM;
// callers must Close it (see [UpForTest] for tests).
func Up(ctx context.Context, topo Topology, opts Options) (*Testbed, error) {
	if err := topo.Validate(); err != nil {
		return nil, err
	}
	if ok, why := Available(); !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, why)
	}
	if len(topo.Flows) > 0 {
		if _, err := lookPath("iperf3"); err != nil {
			return nil, fmt.Errorf("%w: topology has background flows: %w", ErrUnavailable, err)
		}
	}
	log := opts.Logger
	if log == nil {
		log = discardLogger()
	}
	if !opts.KeepStale {
		if err := SweepStale(ctx, log); err != nil {
			log.Warn("sweep stale testbeds", "err", err)
		}
	}
	prefix, err := allocatePrefix()
	if err != nil {
		return nil, err
	}
	idx, _ := instanceIndex(prefix)
	tb := &Testbed{
		topo:    topo,
		names:   names{prefix},
		prefix:  prefix,
		subnet:  subnet(idx),
		log:     log.With("testbed", prefix),
		grace:   opts.StopGrace,
		dir:     opts.Dir,
		nodes:   map[string]*NodeInfo{},
		bridges: map[string]string{},
	}
	if tb.grace <= 0 {
		tb.grace = 2 * time.Second
	}
	register(tb) // from here on a signal tears it down
	start := time.Now()
	if err := tb.build(ctx); err != nil {
		if cerr := tb.Close(); cerr != nil {
			tb.log.Error("teardown after failed Up", "err", cerr)
		}
		return nil, fmt.Errorf("netns testbed %s up: %w", prefix, err)
	}
	tb.log.Info("testbed up", "topology", topo.Name, "subnet", tb.subnet,
		"nodes", len(topo.Nodes), "switches", len(topo.Switches), "took", time.Since(start).Round(time.Millisecond))
	return tb, nil
}

func (tb *Testbed) build(ctx context.Context) error {
	if tb.dir == "" {
		dir, err := os.MkdirTemp("", tb.prefix+"-logs-")
		if err != nil {
			return fmt.Errorf("create log dir: %w", err)
		}
		tb.dir, tb.ownDir = dir, true
	}
	if err := ensureNSFileDir(ctx); err != nil {
		return err
	}
	if err := tb.writeHosts(); err != nil {
		return err
	}
	fab := tb.names.fabric()
	if err := tb.addNamespace(ctx, fab); err != nil {
		return err
	}
	for i, s := range tb.topo.Switches {
		br := tb.names.bridge(i)
		tb.bridges[s.Name] = br
		if err := ipAll(ctx,
			[]string{"-n", fab, "link", "add", br, "type", "bridge"},
			[]string{"-n", fab, "link", "set", br, "up"},
		); err != nil {
			return fmt.Errorf("switch %s: %w", s.Name, err)
		}
	}
	for i, n := range tb.topo.Nodes {
		if err := tb.addNode(ctx, i, n); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	for i, u := range tb.topo.Uplinks {
		if err := tb.addUplink(ctx, i, u); err != nil {
			return fmt.Errorf("uplink %s-%s: %w", u.A, u.B, err)
		}
	}
	return tb.startBackground(ctx)
}

// addNamespace creates a named namespace with loopback up and records it
// for teardown.
func (tb *Testbed) addNamespace(ctx context.Context, ns string) error {
	if _, err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return err
	}
	tb.mu.Lock()
	tb.namespaces = append(tb.namespaces, ns)
	tb.mu.Unlock()
	_, err := run(ctx, "ip", "-n", ns, "link", "set", "lo", "up")
	return err
}

func (tb *Testbed) addNode(ctx context.Context, i int, n Node) error {
	fab := tb.names.fabric()
	info := &NodeInfo{
		Name:      n.Name,
		Switch:    n.Switch,
		IP:        hostIP(tb.subnet, i),
		Namespace: tb.names.nodeNS(n.Name),
		Iface:     Iface,
		Port:      tb.names.port(i),
		Mbit:      n.Mbit,
	}
	if err := tb.addNamespace(ctx, info.Namespace); err != nil {
		return err
	}
	ns := info.Namespace
	// Created inside the namespaces directly: nothing ever appears in the
	// host's namespace.
	if err := ipAll(ctx,
		[]string{"-n", ns, "link", "add", Iface, "type", "veth", "peer", "name", info.Port, "netns", fab},
		[]string{"-n", ns, "addr", "add", fmt.Sprintf("%s/%d", info.IP, tb.subnet.Bits()), "dev", Iface},
		[]string{"-n", ns, "link", "set", Iface, "up"},
		[]string{"-n", fab, "link", "set", info.Port, "master", tb.bridges[n.Switch], "up"},
	); err != nil {
		return err
	}
	if err := shape(ctx, ns, Iface, n.Mbit); err != nil {
		return err
	}
	if err := shape(ctx, fab, info.Port, n.In()); err != nil {
		return err
	}
	if err := tb.addNodeNamespaces(ctx, info); err != nil {
		return err
	}
	tb.nodes[n.Name] = info
	return nil
}

func (tb *Testbed) addUplink(ctx context.Context, i int, u Uplink) error {
	fab := tb.names.fabric()
	a, b := tb.names.uplink(i, 'a'), tb.names.uplink(i, 'b')
	if err := ipAll(ctx,
		[]string{"-n", fab, "link", "add", a, "type", "veth", "peer", "name", b},
		[]string{"-n", fab, "link", "set", a, "master", tb.bridges[u.A], "up"},
		[]string{"-n", fab, "link", "set", b, "master", tb.bridges[u.B], "up"},
	); err != nil {
		return err
	}
	// A veth end's egress comes out of its peer: a (on bridge A) sends
	// toward bridge B.
	if err := shape(ctx, fab, a, u.Mbit); err != nil {
		return err
	}
	// b's egress enters bridge A through a: the direction B to A.
	if err := shape(ctx, fab, b, u.BA()); err != nil {
		return err
	}
	tb.uplinkIf = append(tb.uplinkIf, [2]string{a, b})
	return nil
}

// writeHosts gives every node an /etc/hosts (bind-mounted by ip netns exec
// from /etc/netns/NS/hosts) that resolves every node's name to its address.
func (tb *Testbed) writeHosts() error {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for i, n := range tb.topo.Nodes {
		fmt.Fprintf(&b, "%s\t%s\n", hostIP(tb.subnet, i), n.Name)
	}
	for _, n := range tb.topo.Nodes {
		dir := filepath.Join(etcNetnsDir, tb.names.nodeNS(n.Name))
		tb.mu.Lock()
		tb.etcDirs = append(tb.etcDirs, dir)
		tb.mu.Unlock()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("hosts file for %s: %w", n.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("hosts file for %s: %w", n.Name, err)
		}
	}
	return nil
}

// ipAll runs ip with each argument list in turn, stopping at the first error.
func ipAll(ctx context.Context, cmds ...[]string) error {
	for _, args := range cmds {
		if _, err := run(ctx, "ip", args...); err != nil {
			return err
		}
	}
	return nil
}
