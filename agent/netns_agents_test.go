package agent_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// netnsAgents is a cluster of `shoal agent` processes on a namespace
// testbed, one per node, as the testbed tests of this package start it.
type netnsAgents struct {
	tb  *netns.Testbed
	bin string
	// first is the node whose namespace the CLI runs in; addr its API.
	first, addr string
	tokenFile   string
	// procs are the agents, by node.
	procs map[string]*netns.Process
}

// netnsTestbed skips t with shortSkip under -short, and on a host that
// cannot run a testbed or lacks one of the programs needs; else it builds
// shoal and brings topo up until t ends.
func netnsTestbed(t *testing.T, shortSkip string, topo netns.Topology, needs ...string) (tb *netns.Testbed, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip(shortSkip)
	}
	netns.SkipIfUnavailable(t)
	for _, prog := range needs {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skip("needs " + prog)
		}
	}
	bin = testcluster.BuildShoal(t)
	return netns.UpForTest(t, topo, netns.Options{}), bin
}

// startNetnsAgents starts an agent on each of names in tb: bound to its
// namespace's address, joining the first, bootstrapping once all are
// there, logging warnings only, with extra flags after those. An agent's
// log goes to t when the test fails.
func startNetnsAgents(t *testing.T, tb *netns.Testbed, bin string, names []string, extra ...string) netnsAgents {
	t.Helper()
	dir := t.TempDir()
	c := netnsAgents{tb: tb, bin: bin, first: names[0], tokenFile: filepath.Join(dir, "token"), procs: map[string]*netns.Process{}}
	if err := os.WriteFile(c.tokenFile, []byte(testcluster.NewToken(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	ip0, _ := tb.Node(c.first)
	c.addr = "https://" + ip0.String() + ":7948"
	for _, node := range names {
		ip, _ := tb.Node(node)
		argv := append([]string{bin, "agent", "--name", node, "--bind", ip.String(), "--data-dir", filepath.Join(dir, node),
			"--token-file", c.tokenFile, "--bootstrap-expect", strconv.Itoa(len(names)), "--join", ip0.String(), "--log-level", "warn"}, extra...)
		pr, err := tb.Start(t.Context(), node, argv, nil)
		if err != nil {
			t.Fatalf("start agent on %s: %v", node, err)
		}
		c.procs[node] = pr
		t.Cleanup(func() {
			if t.Failed() {
				out, _ := pr.Output()
				t.Logf("agent %s log:\n%s", node, out)
			}
		})
	}
	return c
}

// reload sends every agent SIGHUP, which makes it read its --config file
// again, and waits until each has logged a reload that changed what
// applied says ("key old -> new", as the agent logs it at info level).
func (c netnsAgents) reload(t *testing.T, applied string) {
	t.Helper()
	for node, pr := range c.procs {
		if err := pr.Signal(syscall.SIGHUP); err != nil {
			t.Fatalf("SIGHUP to the agent on %s: %v", node, err)
		}
	}
	testcluster.WaitFor(t, 30*time.Second, "every agent to apply "+applied, func() bool {
		for _, pr := range c.procs {
			if out, _ := pr.Output(); !bytes.Contains(out, []byte(applied)) {
				return false
			}
		}
		return true
	})
}

// cli runs `shoal ARGS` against the first agent, in its namespace, at
// once; a caller that polls with it waits through waitCLI.
func (c netnsAgents) cli(ctx context.Context, args ...string) (string, error) {
	return c.tb.Run(ctx, c.first, append([]string{c.bin}, append(args, "--addr", c.addr, "--token-file", c.tokenFile)...)...)
}

// cliPace is the least time from the end of one check of waitCLI to the
// start of the next. A check execs the CLI (a process, a TLS handshake,
// a request) on the host the agents, iperf3 and the test share; back to
// back for minutes it would take a core from them, where a reading every
// ~0.1 s answers a wait of seconds at once.
const cliPace = 100 * time.Millisecond

// waitCLI waits until cond, which runs the CLI, holds, or fails t after
// timeout: cond is checked at once, then at most once per cliPace after
// the last check ended (testcluster.WaitFor's deadline and report).
func waitCLI(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	var next time.Time
	testcluster.WaitFor(t, timeout, what, func() bool {
		if time.Now().Before(next) {
			return false
		}
		ok := cond()
		next = time.Now().Add(cliPace)
		return ok
	})
}
