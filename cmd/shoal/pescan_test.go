package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

// buildGPUProgram builds a tiny ELF that links a fake libcudart, as a CUDA
// program would. No GPU or CUDA is needed (or present): only the dynamic
// section matters.
func buildGPUProgram(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed: cannot build the test ELF")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libcudart.so.12")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-Wl,-soname,libcudart.so.12", "-o", lib, "-x", "c", "/dev/null").CombinedOutput(); err != nil {
		t.Skipf("gcc cannot build a shared library: %v %s", err, out)
	}
	os.Symlink(lib, filepath.Join(dir, "libcudart.so"))
	src := filepath.Join(dir, "main.c")
	os.WriteFile(src, []byte("int main(void){return 0;}\n"), 0o644)
	prog := filepath.Join(dir, "cuda-app")
	if out, err := exec.Command("gcc", "-o", prog, src, "-Wl,--no-as-needed", "-L"+dir, "-lcudart").CombinedOutput(); err != nil {
		t.Skipf("gcc cannot link the test ELF: %v %s", err, out)
	}
	return prog
}

func TestGPUNeedFoundInExecutable_NoGPUOnThisMachine(t *testing.T) {
	prog := buildGPUProgram(t)
	c := testcluster.New(t, 1, testcluster.Options{BootstrapExpect: 1})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}

	// Declared nothing: the job needs a GPU, says why, and no node has one,
	// so an immediate job fails at once with the reason.
	out, errOut, code := shoal(t, env, "submit", "-n", "1", "--", prog)
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	info, _, _ := shoal(t, env, "job", id)
	if !strings.Contains(info, "gpu:1 (detected in the executable's libraries)") {
		t.Fatalf("shoal job does not say the GPU need was detected:\n%s", info)
	}
	_, errOut, code = shoal(t, env, "run", "--immediate", "-n", "1", "--", prog)
	if code == 0 || !strings.Contains(errOut, "gpu") {
		t.Fatalf("immediate GPU job on a cluster without GPUs: exit %d\n%s", code, errOut)
	}
	// --pe none overrides the scan.
	out, _, _ = shoal(t, env, "submit", "-n", "1", "--pe", "none", "--", prog)
	info, _, _ = shoal(t, env, "job", strings.TrimSpace(out))
	if strings.Contains(info, "gpu") {
		t.Fatalf("--pe none still needs a GPU:\n%s", info)
	}
	shoal(t, env, "kill", id)
}
