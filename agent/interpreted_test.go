package agent_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/testcluster"
)

// TestRunMPI4PyBench runs an MPI program that is not an ELF file: Python
// with mpi4py. The flavour comes from the libmpi that mpi4py's compiled
// module links (Debian's python3-mpi4py: Open MPI), so mpirun starts one
// job of four ranks; detected as no MPI, it would start four singletons
// that each print "process 0 of 1" and exit 0. One rank per agent: Open
// MPI ranks of two agents that share a host and its hostname crash in
// shared memory (a limit of test clusters on one machine, not of mpi4py).
func TestRunMPI4PyBench(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("mpirun.openmpi"); err != nil {
		t.Skip("mpirun.openmpi not installed (make deps installs it)")
	}
	if _, err := os.Stat("/usr/lib/python3/dist-packages/mpi4py"); err != nil {
		t.Skip("python3-mpi4py not installed (make deps installs it)")
	}
	c := jobCluster(t, 4, nil)
	dir := t.TempDir()
	cmd := exec.Command(testcluster.BuildShoal(t), "run", "-n", "4", "--ppn", "1", "--timeout", "2m",
		"--", "python3", "-m", "mpi4py.bench", "helloworld")
	cmd.Dir = dir
	// The system's python3, as a user without pyenv or a venv finds it.
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin", "SHOAL_ADDR="+c.Client(0).Base, "SHOAL_TOKEN="+c.Token(),
		"SHOAL_AGENTS_CACHE="+filepath.Join(dir, "agents.json"))
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("shoal run: %v\nstdout:\n%s\nstderr:\n%s", err, so.String(), se.String())
	}
	out := so.String()
	for _, want := range []string{"process 0 of 4", "process 1 of 4", "process 2 of 4", "process 3 of 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " of 1 ") {
		t.Errorf("singletons ran:\n%s", out)
	}
}
