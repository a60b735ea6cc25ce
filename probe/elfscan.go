package probe

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"strings"
)

// ELFInfo is what a job's executable says about its needs through the
// shared libraries it links (seed 001 §III.B, second-level scanning, done
// on the compiled file rather than source code).
type ELFInfo struct {
	// Needed are the DT_NEEDED entries in file order.
	Needed []string `json:"needed"`
	// GPURuntime is the first needed library that is a GPU runtime
	// ("libcudart.so.12"), or "" if none is.
	GPURuntime string `json:"gpu_runtime,omitempty"`
	// MPI is the MPI flavour the program links: "mpich", "openmpi" or "".
	MPI string `json:"mpi,omitempty"`
}

// NeedsGPU reports whether the executable links a GPU runtime.
func (i ELFInfo) NeedsGPU() bool { return i.GPURuntime != "" }

// gpuRuntimes are library stems (the name before ".so") that only make
// sense with a GPU or similar accelerator: CUDA, ROCm/HIP, OpenCL, SYCL and
// oneAPI Level Zero, and the math libraries built on them. NVML
// (libnvidia-ml) is absent on purpose: monitoring tools link it and run
// fine without using a GPU for compute.
var gpuRuntimes = map[string]bool{
	// NVIDIA CUDA
	"libcuda": true, "libcudart": true, "libnvrtc": true, "libcublas": true,
	"libcublasLt": true, "libcufft": true, "libcurand": true, "libcusparse": true,
	"libcusolver": true, "libcudnn": true, "libnccl": true, "libnvToolsExt": true,
	"libnppc": true, "libnvjpeg": true, "libcutensor": true,
	// AMD ROCm / HIP
	"libamdhip64": true, "libhiprtc": true, "librocblas": true, "libhipblas": true,
	"libhipfft": true, "librocfft": true, "libhiprand": true, "librocrand": true,
	"libhipsparse": true, "librocsparse": true, "libMIOpen": true, "librccl": true,
	"libhsa-runtime64": true,
	// Vendor-neutral and Intel
	"libOpenCL": true, "libze_loader": true, "libsycl": true,
}

// soStem returns the part of a library name before ".so" ("libcudart" for
// "libcudart.so.12") and the version suffix after ".so" (".12").
func soStem(lib string) (stem, version string) {
	if i := strings.Index(lib, ".so"); i >= 0 {
		return lib[:i], lib[i+len(".so"):]
	}
	return lib, ""
}

// mpiFlavour tells MPICH from Open MPI by library name, since plain
// `mpiexec` may be either. MPICH's own soname is libmpi.so.12 (Debian
// renames it libmpich.so.12; Intel MPI and MVAPICH keep that ABI), while
// Open MPI's libmpi has been .so.40 since 3.0 (.20 in 2.x), so a libmpi
// other than .12 is Open MPI.
func mpiFlavour(lib string) string {
	stem, version := soStem(lib)
	switch {
	case strings.HasPrefix(stem, "libmpich"), stem == "libmpifort", stem == "libmpicxx":
		return "mpich"
	case stem == "libmpi" && version == ".12":
		return "mpich"
	case stem == "libmpi", strings.HasPrefix(stem, "libmpi_"), // libmpi_cxx, libmpi_mpifh-gfortran
		stem == "libopen-rte", stem == "libopen-pal":
		return "openmpi"
	}
	return ""
}

// ScanELF reads the DT_NEEDED entries of the executable at path.
func ScanELF(path string) (ELFInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return ELFInfo{}, fmt.Errorf("scan executable: %w", err)
	}
	defer f.Close()
	info, err := ScanELFReader(f)
	if err != nil {
		return ELFInfo{}, fmt.Errorf("scan executable %s: %w", path, err)
	}
	return info, nil
}

// ScanELFReader is ScanELF over any reader, for files not on disk.
// Input that does not start with the ELF magic wraps ErrNotELF; an ELF
// file without a dynamic section (statically linked) has no Needed.
func ScanELFReader(r io.ReaderAt) (ELFInfo, error) {
	var magic [len(elf.ELFMAG)]byte
	if n, _ := r.ReadAt(magic[:], 0); n < len(magic) || !bytes.Equal(magic[:], []byte(elf.ELFMAG)) {
		hint := ""
		if n >= 2 && magic[0] == '#' && magic[1] == '!' {
			hint = " (a script: scan the program it runs instead)"
		}
		return ELFInfo{}, fmt.Errorf("%w%s", ErrNotELF, hint)
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return ELFInfo{}, fmt.Errorf("parse ELF: %w", err)
	}
	defer f.Close()
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil {
		return ELFInfo{}, fmt.Errorf("read DT_NEEDED: %w", err)
	}
	return classifyLibs(needed), nil
}

// classifyLibs is the pure part of the scan: names in, needs out.
func classifyLibs(needed []string) ELFInfo {
	info := ELFInfo{Needed: needed}
	for _, lib := range needed {
		if stem, _ := soStem(lib); info.GPURuntime == "" && gpuRuntimes[stem] {
			info.GPURuntime = lib
		}
		if info.MPI == "" {
			info.MPI = mpiFlavour(lib)
		}
	}
	return info
}
