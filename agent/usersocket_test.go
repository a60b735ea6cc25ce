package agent_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestUserReachesPackagedSocket: a user on a node where the package put
// the agent's socket at /run/shoal/shoal.sock runs `shoal nodes` and
// `shoal run` with no address, no token and no SHOAL_ variable at all.
// The CLI runs as uid 65534 in a private mount namespace whose /run holds
// only the test agent's socket directory, so the machine's /run is not
// touched and no other agent can answer.
func TestUserReachesPackagedSocket(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a mount namespace and a client as uid 65534 (nobody)")
	}
	nobody, err := user.LookupId("65534")
	if err != nil {
		t.Skip("needs a user 65534 (nobody)")
	}
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (util-linux)", tool)
		}
	}
	// Root's directories that the user may enter: the socket's (root's,
	// 0755, as RuntimeDirectory makes /run/shoal) and the CLI binary's.
	shared := t.TempDir()
	if err := os.Chmod(filepath.Dir(shared), 0o755); err != nil {
		t.Fatal(err)
	}
	sockDir, binDir := filepath.Join(shared, "run-shoal"), filepath.Join(shared, "bin")
	for _, d := range []string{shared, sockDir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(testcluster.BuildShoal(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "shoal")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	jobCluster(t, 1, func(_ int, cfg *agent.Config) { cfg.Socket = filepath.Join(sockDir, "shoal.sock") })

	asNobody := func(args ...string) (string, error) {
		t.Helper()
		script := `mount -t tmpfs -o mode=0755 tmpfs /run && mkdir /run/shoal && mount --bind "$1" /run/shoal && shift &&
exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"`
		cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", sockDir, bin}, args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"} // nothing of shoal's
		cmd.Dir = "/"
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := asNobody("nodes")
	if err != nil || !strings.Contains(out, "n0") {
		t.Fatalf("shoal nodes as %s with no setup: %v\n%s", nobody.Username, err, out)
	}
	out, err = asNobody("run", "-n", "1", "--", "id", "-un")
	if err != nil || !strings.Contains(out, nobody.Username) || !strings.Contains(out, "done, exit code 0") {
		t.Fatalf("shoal run as %s with no setup: %v\n%s", nobody.Username, err, out)
	}
}
