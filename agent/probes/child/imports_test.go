package child

import (
	"os/exec"
	"strings"
	"testing"
)

// TestChild_DoesNotImportAgent keeps the probe process's body apart from
// the agent: `shoal probe KIND` must not need the agent's code.
func TestChild_DoesNotImportAgent(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list imports with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/shoal-hpc/shoal/agent" || strings.HasPrefix(p, "github.com/shoal-hpc/shoal/agent/") && p != "github.com/shoal-hpc/shoal/agent/probes/child" {
			t.Errorf("the probe child imports %s; it must not link the agent", p)
		}
	}
}
