package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildShoal builds the shoal binary once per test process and returns its
// path. Agents started in-process need it for what runs as a separate
// process: probe processes, the job helper and `shoal rsh`, which MPI
// calls. The small job-start binary (cmd/shoal-exec) is built beside it,
// where agents look for it (jobrun.ExecBin).
func BuildShoal(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shoal-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "shoal")
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/shoal", "./cmd/shoal-exec")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/shoal ./cmd/shoal-exec: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}
