package probe

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestClassifyLibs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		needed []string
		gpu    string
		mpi    string
	}{
		{name: "plain C", needed: []string{"libc.so.6"}},
		{name: "CUDA runtime", needed: []string{"libcudart.so.12", "libc.so.6"}, gpu: "libcudart.so.12"},
		{name: "driver API", needed: []string{"libcuda.so.1"}, gpu: "libcuda.so.1"},
		{name: "OpenCL", needed: []string{"libOpenCL.so.1"}, gpu: "libOpenCL.so.1"},
		{name: "HIP", needed: []string{"libamdhip64.so.6"}, gpu: "libamdhip64.so.6"},
		{name: "cuBLAS first wins", needed: []string{"libcublas.so.12", "libcudart.so.12"}, gpu: "libcublas.so.12"},
		{name: "NVML is monitoring, not compute", needed: []string{"libnvidia-ml.so.1"}},
		{name: "lookalike name", needed: []string{"libcudartfake.so"}},
		{name: "Debian MPICH", needed: []string{"libmpich.so.12", "libc.so.6"}, mpi: "mpich"},
		{name: "upstream MPICH soname", needed: []string{"libmpi.so.12"}, mpi: "mpich"},
		{name: "MPICH Fortran", needed: []string{"libmpifort.so.12"}, mpi: "mpich"},
		{name: "Open MPI", needed: []string{"libmpi.so.40"}, mpi: "openmpi"},
		{name: "Open MPI 2.x", needed: []string{"libmpi.so.20"}, mpi: "openmpi"},
		{name: "Open MPI C++", needed: []string{"libmpi_cxx.so.40", "libmpi.so.40"}, mpi: "openmpi"},
		{name: "Debian Open MPI Fortran", needed: []string{"libmpi_mpifh-gfortran.so.40"}, mpi: "openmpi"},
		{name: "CUDA-aware MPI", needed: []string{"libmpi.so.40", "libcudart.so.11.0"}, gpu: "libcudart.so.11.0", mpi: "openmpi"},
		{name: "nothing", needed: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := classifyLibs(tt.needed)
			if got.GPURuntime != tt.gpu || got.MPI != tt.mpi || got.NeedsGPU() != (tt.gpu != "") {
				t.Errorf("classifyLibs(%q) = %+v, want gpu %q mpi %q", tt.needed, got, tt.gpu, tt.mpi)
			}
		})
	}
}

// gccOrSkip returns the path of gcc or skips the test saying why.
func gccOrSkip(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed: cannot build test ELF files (apt-get install gcc)")
	}
	return gcc
}

func run(t *testing.T, dir string, stdin string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
}

// buildProgram compiles a tiny program linked, via -l, against fake
// shared libraries with the given link names and sonames. The libraries
// are empty: only their names end up in the program's DT_NEEDED.
func buildProgram(t *testing.T, libs map[string]string) string {
	t.Helper()
	gcc := gccOrSkip(t)
	dir := t.TempDir()
	args := []string{"-x", "c", "-", "-o", "prog", "-Wl,--no-as-needed", "-L" + dir}
	for link, soname := range libs {
		run(t, dir, "int shoal_fake_"+strings.ReplaceAll(link, "-", "_")+"(void) { return 0; }\n",
			gcc, "-x", "c", "-", "-shared", "-fPIC", "-Wl,-soname,"+soname, "-o", "lib"+link+".so")
		args = append(args, "-l"+link)
	}
	run(t, dir, "int main(void) { return 0; }\n", gcc, args...)
	return filepath.Join(dir, "prog")
}

func TestScanELF_BuiltWithGCC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		libs map[string]string // link name -> soname
		gpu  string
		mpi  string
	}{
		{name: "plain C"},
		{name: "CUDA runtime", libs: map[string]string{"cudart": "libcudart.so.12"}, gpu: "libcudart.so.12"},
		{name: "OpenCL", libs: map[string]string{"OpenCL": "libOpenCL.so.1"}, gpu: "libOpenCL.so.1"},
		{name: "MPICH", libs: map[string]string{"mpich": "libmpich.so.12"}, mpi: "mpich"},
		{name: "Open MPI", libs: map[string]string{"mpi": "libmpi.so.40"}, mpi: "openmpi"},
		{name: "MPICH and HIP", libs: map[string]string{"mpich": "libmpich.so.12", "amdhip64": "libamdhip64.so.6"},
			gpu: "libamdhip64.so.6", mpi: "mpich"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prog := buildProgram(t, tt.libs)
			info, err := ScanELF(prog)
			if err != nil {
				t.Fatal(err)
			}
			if info.GPURuntime != tt.gpu || info.MPI != tt.mpi {
				t.Errorf("ScanELF = %+v, want gpu %q mpi %q", info, tt.gpu, tt.mpi)
			}
			for _, soname := range tt.libs {
				if !contains(info.Needed, soname) {
					t.Errorf("Needed %q lacks %q", info.Needed, soname)
				}
			}
			if !contains(info.Needed, "libc.so.6") {
				t.Errorf("Needed %q lacks libc.so.6", info.Needed)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestScanELF_StaticBinary(t *testing.T) {
	t.Parallel()
	gcc := gccOrSkip(t)
	dir := t.TempDir()
	cmd := exec.Command(gcc, "-x", "c", "-", "-static", "-o", "prog")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader("int main(void) { return 0; }\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("gcc cannot link statically here (no libc.a?): %v\n%s", err, out)
	}
	info, err := ScanELF(filepath.Join(dir, "prog"))
	if err != nil || len(info.Needed) != 0 || info.NeedsGPU() || info.MPI != "" {
		t.Fatalf("ScanELF(static) = %+v, %v; want no libraries", info, err)
	}
}

func TestScanELF_NotELF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, data, hint string
	}{
		{name: "script.sh", data: "#!/bin/sh\nexec mpiexec ./a.out\n", hint: "a script"},
		{name: "empty", data: ""},
		{name: "text", data: "hello world"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(dir, tt.name)
			if err := os.WriteFile(p, []byte(tt.data), 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := ScanELF(p)
			if !errors.Is(err, ErrNotELF) {
				t.Fatalf("err = %v, want ErrNotELF", err)
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("error %q should name the file and say %q", err, tt.hint)
			}
		})
	}
}

// TestScanELF_RecordedBinary needs no compiler: the fixture was built
// once (testdata/README.md).
func TestScanELF_RecordedBinary(t *testing.T) {
	t.Parallel()
	info, err := ScanELF("testdata/tiny-dynamic.elf")
	if err != nil {
		t.Fatal(err)
	}
	want := ELFInfo{Needed: []string{"libm.so.6", "libc.so.6"}}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("ScanELF = %+v, want %+v", info, want)
	}
}

func TestScanELF_Errors(t *testing.T) {
	t.Parallel()
	_, err := ScanELF(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	_, err = ScanELFReader(bytes.NewReader([]byte("\x7fELF\x02\x01\x01garbage")))
	if err == nil || errors.Is(err, ErrNotELF) {
		t.Errorf("truncated ELF: err = %v, want a parse error that is not ErrNotELF", err)
	}
}

func FuzzScanELF(f *testing.F) {
	f.Add([]byte("#!/bin/sh\n"))
	f.Add([]byte("\x7fELF"))
	f.Add([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00"))
	if b, err := os.ReadFile("testdata/tiny-dynamic.elf"); err == nil {
		f.Add(b) // a real dynamic ELF, so mutations reach DT_NEEDED
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := ScanELFReader(bytes.NewReader(data))
		if err != nil && !reflect.DeepEqual(info, ELFInfo{}) {
			t.Fatalf("error %v with non-empty info %+v", err, info)
		}
		if !bytes.HasPrefix(data, []byte("\x7fELF")) && !errors.Is(err, ErrNotELF) {
			t.Fatalf("non-ELF input gave %v, want ErrNotELF", err)
		}
	})
}
