package netns

import (
	"io"
	"log/slog"
	"net/netip"
	"sort"
	"sync"
	"time"
)

// Options tune [Up]. The zero value is usable.
type Options struct {
	// Logger receives structured logs of setup, teardown and processes;
	// nil discards them.
	Logger *slog.Logger
	// Dir holds the logs of processes started with [Testbed.Start]. Empty:
	// a temporary directory that Close removes.
	Dir string
	// StopGrace is how long Close waits after SIGTERM before SIGKILL.
	// Default 2s.
	StopGrace time.Duration
	// KeepStale stops Up from sweeping leftovers of testbeds whose owning
	// process is dead (the default is to sweep them first).
	KeepStale bool
}

// NodeInfo describes one node of a running testbed.
type NodeInfo struct {
	Name      string
	Switch    string
	IP        netip.Addr
	Namespace string // named network namespace (ip netns)
	Iface     string // interface inside the namespace: always "eth0"
	Port      string // the bridge-side end of its veth, in the fabric namespace
	Mbit      int    // link rate; 0 when unshaped
}

// Iface is the name of every node's interface inside its namespace.
const Iface = "eth0"

// Testbed is a running emulated cluster. Its methods are safe for
// concurrent use.
type Testbed struct {
	topo   Topology
	names  names
	prefix string
	subnet netip.Prefix
	log    *slog.Logger
	grace  time.Duration
	dir    string
	ownDir bool

	nodes    map[string]*NodeInfo // fixed after Up
	bridges  map[string]string    // switch name -> bridge name
	uplinkIf [][2]string          // per Topology.Uplinks: ends on A and on B

	mu         sync.Mutex
	closed     bool
	namespaces []string // created, in order
	etcDirs    []string
	nsFiles    []string // persistent mount and UTS namespaces of nodes
	procs      []*Process
	seq        int

	closeOnce sync.Once
	closeErr  error
}

// Prefix is the instance prefix that begins every name this testbed created;
// pass it to [Sweep] or [Leftovers].
func (tb *Testbed) Prefix() string { return tb.prefix }

// Subnet is the /24 the nodes' addresses come from.
func (tb *Testbed) Subnet() netip.Prefix { return tb.subnet }

// Topology returns the topology the testbed was built from.
func (tb *Testbed) Topology() Topology { return tb.topo }

// Dir is the directory holding process logs.
func (tb *Testbed) Dir() string { return tb.dir }

// Node returns the IP address of the named node.
func (tb *Testbed) Node(name string) (netip.Addr, bool) {
	n, ok := tb.nodes[name]
	if !ok {
		return netip.Addr{}, false
	}
	return n.IP, true
}

// Nodes describes every node, in topology order.
func (tb *Testbed) Nodes() []NodeInfo {
	out := make([]NodeInfo, 0, len(tb.nodes))
	for _, n := range tb.nodes {
		out = append(out, *n)
	}
	order := map[string]int{}
	for i, n := range tb.topo.Nodes {
		order[n.Name] = i
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i].Name] < order[out[j].Name] })
	return out
}

// Processes returns the processes started with Start, including exited ones.
func (tb *Testbed) Processes() []*Process {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]*Process(nil), tb.procs...)
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
