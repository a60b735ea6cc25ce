package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// enableEnv turns the end-to-end tests on.
const enableEnv = "SHOAL_E2E"

// formTimeout bounds cluster formation and re-convergence.
const formTimeout = 90 * time.Second

func skipUnlessEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv(enableEnv) != "1" {
		t.Skip("end-to-end tests: set " + enableEnv + "=1 (make e2e; needs root)")
	}
	netns.SkipIfUnavailable(t)
}

// fiveNodes brings up testdata/five.json with one agent per node, the three
// voters (n1-n3, sw1) started first, and waits until it is formed.
func fiveNodes(t *testing.T) (*lab.Lab, string) {
	t.Helper()
	skipUnlessEnabled(t)
	topo, err := netns.LoadTopology("testdata/five.json")
	if err != nil {
		t.Fatal(err)
	}
	l := lab.UpForTest(t, topo, lab.Options{
		Shoal:       shoalBin(t),
		VotersFirst: true,
		// Probes would fill the 100 Mbit links the tests do not measure.
		AgentArgs: []string{"--bandwidth-interval", "1h", "--dead-voter-grace", "5s"},
	})
	start := time.Now()
	leader, err := l.WaitFormed(t.Context(), formTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster of %d formed in %v, leader %s", len(l.Nodes()), time.Since(start).Round(time.Millisecond), leader)
	return l, leader
}

// ctxFor is a context for one CLI call or wait.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// buildRing compiles examples/mpi/ring.c with MPICH into a test directory.
func buildRing(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("mpicc.mpich")
	if err != nil {
		t.Skip("MPICH's mpicc.mpich not installed (make deps)")
	}
	out := filepath.Join(t.TempDir(), "ring")
	if b, err := exec.Command(cc, "-O2", "-o", out, "../examples/mpi/ring.c").CombinedOutput(); err != nil {
		t.Fatalf("mpicc ring.c: %v\n%s", err, b)
	}
	return out
}

// other returns a node of nodes that is not avoid.
func other(nodes []string, avoid ...string) string {
	for _, n := range nodes {
		skip := false
		for _, a := range avoid {
			skip = skip || n == a
		}
		if !skip {
			return n
		}
	}
	return ""
}

// binEnv names a prebuilt shoal binary to test instead of building one.
const binEnv = "SHOAL_BIN"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// shoalBin returns $SHOAL_BIN or builds ./cmd/shoal once per test process.
// (Not testcluster.BuildShoal: that package pulls in the agent, which this
// package, a pure client of the binary, has no need to compile.)
func shoalBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(binEnv); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shoal-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "shoal")
		cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/shoal", "./cmd/shoal-exec")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/shoal ./cmd/shoal-exec: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// waitNoLeader waits until node's `shoal leader` fails (exit 3: no leader).
func waitNoLeader(t *testing.T, l *lab.Lab, node string) error {
	return lab.WaitFor(t.Context(), formTimeout, node+" to lose its leader", func(ctx context.Context) error {
		r, err := l.Exec(ctx, node, "leader")
		if err != nil {
			return err
		}
		if r.Code == 0 {
			return fmt.Errorf("%s still follows %s", node, strings.TrimSpace(r.Stdout))
		}
		return nil
	})
}
