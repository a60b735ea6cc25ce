package confine

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	cgroups "github.com/containerd/cgroups/v3"
	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// TestOpenDetectsThisMachine logs what Open finds here and checks it
// against the mount: a hybrid or legacy machine whose cgroup2 hierarchy
// lacks the controllers is confined through v1.
func TestOpenDetectsThisMachine(t *testing.T) {
	t.Parallel()
	needRoot(t)
	m := testManager(t, Open)
	t.Logf("cgroups mode %d (1 legacy, 2 hybrid, 3 unified): %s", cgroups.Mode(), m.Support())
	_, v2err := openV2(m.cfg, unifiedMount(), v2Need)
	switch {
	case cgroups.Mode() == cgroups.Unified && m.Support().Version != V2:
		t.Errorf("a unified machine confined through %s", m.Support().Version)
	case cgroups.Mode() != cgroups.Unified && v2err != nil && m.Support().Version != V1:
		t.Errorf("no v2 controllers (%v), yet confined through %s", v2err, m.Support().Version)
	}
	for _, c := range []string{"memory", "cpu"} {
		if !m.Support().has(c) {
			t.Errorf("confined without the %s controller: %s", c, m.Support())
		}
	}
	forced := m.cfg
	if m.Support().Version == V1 {
		forced.Hierarchy = HierarchyV2
	} else {
		forced.Hierarchy = HierarchyV1
	}
	if _, err := Open(forced); err == nil {
		t.Errorf("Open(%s) worked on a machine that confines through %s", forced.Hierarchy, m.Support().Version)
	} else {
		t.Logf("Open(%s): %v", forced.Hierarchy, err)
	}
	bad := m.cfg
	bad.Parent = "../escape"
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "want a clean path") {
		t.Errorf("Open with parent ../escape = %v", err)
	}
}

// TestOpenAsAUserSaysWhy runs Open in this test binary as nobody, through
// the job helper: an agent that is not root gets one line saying why.
func TestOpenAsAUserSaysWhy(t *testing.T) {
	t.Parallel()
	needRoot(t)
	if os.Getenv("CONFINE_OPEN_AS_USER") == "1" {
		t.Skip("the inner run is TestOpenAsNobody")
	}
	spec := jobexec.Spec{Cred: &jobexec.Cred{User: "nobody", UID: 65534, GID: 65534}, Dir: "/"}
	cmd, err := jobexec.Command("", spec, []string{jobexec.SelfExe, "-test.run=^TestOpenAsNobody$", "-test.v"})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "CONFINE_OPEN_AS_USER=1"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := jobexec.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	t.Logf("as nobody: %s", strings.TrimSpace(out.String()))
	const want = "the agent needs root, or a cgroup delegated to its user"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("Open as nobody said:\n%s\nwant %q", out.String(), want)
	}
}

func TestOpenAsNobody(t *testing.T) {
	if os.Getenv("CONFINE_OPEN_AS_USER") != "1" {
		t.Skip("run by TestOpenAsAUserSaysWhy")
	}
	cfg := DefaultConfig()
	cfg.Parent = fmt.Sprintf("shoal-test-nobody-%d", os.Getpid())
	m, err := Open(cfg)
	if err == nil {
		for _, d := range m.parentDirs() {
			os.Remove(d)
		}
		t.Fatalf("nobody opened %s", m.Support())
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the reason is more than one line: %q", err)
	}
	t.Log(err)
}
