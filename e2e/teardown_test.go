package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// failScenarioEnv makes TestTeardown_FailingHelper bring a lab up and fail.
const failScenarioEnv = "SHOAL_E2E_FAIL_SCENARIO"

const prefixLine = "LAB_PREFIX="

// TestTeardown_FailingHelper is run as a subprocess by
// TestTeardown_FailingTestLeavesNothing: it brings up five agents with
// confined hogs, prints its testbed prefix and cgroup, and fails.
func TestTeardown_FailingHelper(t *testing.T) {
	if os.Getenv(failScenarioEnv) != "1" {
		t.Skip("helper of TestTeardown_FailingTestLeavesNothing")
	}
	topo, err := netns.LoadTopology("testdata/five.json")
	if err != nil {
		t.Fatal(err)
	}
	topo.Hogs = []netns.Hog{{Node: "n4", Workers: 1, Nice: 19}}
	l := lab.UpForTest(t, topo, lab.Options{Shoal: shoalBin(t), ConfineHogs: 20, EmulateLoad: true})
	if _, err := l.WaitFormed(t.Context(), formTimeout); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(prefixLine + l.TB.Prefix() + " " + filepath.Dir(l.ProcsFile("n4")) + "\n")
	t.Fatal("failing on purpose with the lab up")
}

// TestTeardown_FailingTestLeavesNothing: a test that fails with a whole
// cluster up leaves no namespace, bridge, process, file or cgroup behind.
func TestTeardown_FailingTestLeavesNothing(t *testing.T) {
	skipUnlessEnabled(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTeardown_FailingHelper$", "-test.v")
	cmd.Env = append(os.Environ(), failScenarioEnv+"=1", binEnv+"="+shoalBin(t))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("helper passed; want it to fail:\n%s", out)
	}
	var prefix, cgroup string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefixLine); ok {
			prefix, cgroup, _ = strings.Cut(rest, " ")
		}
	}
	if prefix == "" {
		t.Fatalf("helper printed no prefix:\n%s", out)
	}
	r, err := netns.Leftovers(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Empty() {
		t.Errorf("left behind by the failed test: %v", r)
	}
	if cgroup == "" || cgroup == "." {
		t.Errorf("helper had no hog cgroup")
	} else if _, err := os.Stat(filepath.Dir(cgroup)); !os.IsNotExist(err) {
		t.Errorf("cgroup %s still there: %v", filepath.Dir(cgroup), err)
	}
	t.Logf("helper failed as intended; nothing of %s left", prefix)
}
