package purity

import (
	"os/exec"
	"strings"
	"testing"
)

// corePackages are the packages whose decisions are pure functions of
// their inputs; the Makefile's CORE_PURE_PKGS lists the same.
var corePackages = []string{
	"github.com/shoal-hpc/shoal/alloc",
	"github.com/shoal-hpc/shoal/leader",
	"github.com/shoal-hpc/shoal/netmodel",
	"github.com/shoal-hpc/shoal/placement",
	"github.com/shoal-hpc/shoal/raftfsm",
	"github.com/shoal-hpc/shoal/elastic",
	"github.com/shoal-hpc/shoal/probeplan",
	"github.com/shoal-hpc/shoal/nodestate",
	"github.com/shoal-hpc/shoal/vivaldi",
}

// impure names what a dependency of the core must not be, and why: a
// process runner, a host sampler, a gossip transport, or one of shoal's
// own packages that wrap them.
var impure = []struct{ prefix, why string }{
	{"os/exec", "runs processes"},
	{"github.com/shirou/gopsutil", "samples the host"},
	{"github.com/hashicorp/memberlist", "is the gossip transport"},
	{"github.com/shoal-hpc/shoal/probe", "holds the samplers and the probe server"},
	{"github.com/shoal-hpc/shoal/gossip", "runs memberlist"},
	{"github.com/shoal-hpc/shoal/agent", "wires the I/O"},
}

// why reports the reason a dependency is refused, or "" for an allowed one.
func why(dep string) string {
	for _, f := range impure {
		if dep == f.prefix || strings.HasPrefix(dep, f.prefix+"/") {
			return f.why
		}
	}
	return ""
}

func TestWhy(t *testing.T) {
	t.Parallel()
	for dep, refused := range map[string]bool{
		"os/exec":                              true,
		"os":                                   false,
		"net":                                  false,
		"github.com/shirou/gopsutil/v3/cpu":    true,
		"github.com/hashicorp/memberlist":      true,
		"github.com/hashicorp/raft":            false,
		"github.com/shoal-hpc/shoal/probe":     true,
		"github.com/shoal-hpc/shoal/probeplan": false,
		"github.com/shoal-hpc/shoal/agent/raftnode":   true,
		"github.com/shoal-hpc/shoal/gossip":           true,
		"github.com/shoal-hpc/shoal/internal/natsort": false,
	} {
		if got := why(dep) != ""; got != refused {
			t.Errorf("why(%q) refuses = %v, want %v", dep, got, refused)
		}
	}
}

// TestCoreLinksNoIO reads every core package's transitive dependencies
// from go list and refuses any that samples, runs processes or gossips.
func TestCoreLinksNoIO(t *testing.T) {
	t.Parallel()
	args := append([]string{"list", "-f", `{{.ImportPath}} {{len .Imports}} {{join .Deps " "}}`}, corePackages...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(corePackages) {
		t.Fatalf("go list printed %d packages, want %d:\n%s", len(lines), len(corePackages), out)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		pkg, imports, deps := f[0], f[1], f[2:]
		// A package that imports anything links at least that: no
		// dependencies would mean the check read nothing and would pass
		// vacuously. Only a leaf vocabulary (alloc) imports nothing.
		if imports != "0" && len(deps) == 0 {
			t.Errorf("%s: go list printed no dependencies for %s imports", pkg, imports)
		}
		for _, d := range deps {
			if w := why(d); w != "" {
				t.Errorf("%s links %s, which %s: take what the core needs as arguments, and move the I/O to the agent", pkg, d, w)
			}
		}
	}
}
