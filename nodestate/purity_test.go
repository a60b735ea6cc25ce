package nodestate

import (
	"os/exec"
	"strings"
	"testing"
)

// The schema links the standard library alone: every package that reads
// the observed state, the pure core among them, can import it without
// linking anything else (internal/purity checks the core's graph for
// samplers and transports; this is stricter).
func TestStandardLibraryOnly(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no package: the check would pass vacuously")
	}
	for _, d := range deps {
		if d != "github.com/shoal-hpc/shoal/nodestate" {
			t.Errorf("nodestate links %s: the schema imports the standard library alone", d)
		}
	}
}
