package alloc

import (
	"os/exec"
	"strings"
	"testing"
)

// The package links nothing, not even the standard library: both the
// stored state and placement import it, and neither may gain a
// dependency through it.
func TestImportsNothing(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no package: the check would pass vacuously")
	}
	for _, d := range deps {
		if d != "github.com/shoal-hpc/shoal/alloc" {
			t.Errorf("alloc links %s: it must import nothing", d)
		}
	}
}
