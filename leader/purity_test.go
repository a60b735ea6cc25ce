package leader

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// forbidden reports why an import has no place in the pure core: network
// and file system I/O, processes, and randomness a test cannot seed.
func forbidden(imp string) bool {
	for _, p := range []string{"net", "os", "syscall", "math/rand", "crypto/rand", "unsafe"} {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}

// The core stays pure: go list shows what its non-test files import, and
// no non-test file may read the wall clock. (internal/purity checks the
// whole dependency graph for samplers, processes and transports; this
// test is stricter on the package itself: its decisions take everything
// through the View.)
func TestPure(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatal("go list printed no imports: the check would pass vacuously")
	}
	for _, imp := range imports {
		if forbidden(imp) {
			t.Errorf("leader imports %q: the core must not do I/O; take what it needs through the View", imp)
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "time.Now") {
			t.Errorf("%s mentions time.Now: the core reads the time from View.Now", f)
		}
	}
}
