package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// progTree lays out, under one temporary root, what a lab node holds for
// interpreted MPI programs: a Python with mpi4py built against Open MPI,
// a virtual environment with its own mpi4py built against MPICH, R with
// Rmpi, Julia with MPIPreferences, a pyenv shim, and scripts. Interpreters
// and compiled bindings are tiny ELF files whose DT_NEEDED names the MPI
// library, as the real ones do.
func progTree(t *testing.T) string {
	t.Helper()
	plain := buildProgram(t, nil)
	ompi := buildProgram(t, map[string]string{"mpi": "libmpi.so.40"})
	mpich := buildProgram(t, map[string]string{"mpich": "libmpich.so.12"})
	root := t.TempDir()
	put := func(rel, data string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	copyELF := func(src, rel string) {
		t.Helper()
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		put(rel, string(b), 0o755)
	}
	link := func(target, rel string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	const so = "MPI.cpython-311-x86_64-linux-gnu.so"
	copyELF(plain, "usr/bin/python3.11")
	link("python3.11", "usr/bin/python3")
	copyELF(ompi, "usr/lib/python3/dist-packages/mpi4py/"+so)
	copyELF(plain, "usr/bin/Rscript")
	copyELF(plain, "usr/bin/julia")
	copyELF(plain, "usr/bin/plain")
	copyELF(mpich, "usr/bin/mpich_prog")
	copyELF(ompi, "rlib/Rmpi/libs/Rmpi.so")
	// A venv of its own, and one that also sees the system's packages.
	if err := os.MkdirAll(filepath.Join(root, "venv/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(filepath.Join(root, "usr/bin/python3"), "venv/bin/python3")
	put("venv/pyvenv.cfg", "home = "+filepath.Join(root, "usr/bin")+"\ninclude-system-site-packages = false\n", 0o644)
	copyELF(mpich, "venv/lib/python3.11/site-packages/mpi4py/"+so)
	if err := os.MkdirAll(filepath.Join(root, "venv2/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(filepath.Join(root, "usr/bin/python3"), "venv2/bin/python3")
	put("venv2/pyvenv.cfg", "home = "+filepath.Join(root, "usr/bin")+"\ninclude-system-site-packages = true\n", 0o644)
	copyELF(mpich, "pp/mpi4py/"+so)
	// pyenv: a shim that hands over to pyenv, and the version it picks.
	put("pyenv/shims/python3", "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\nexport PYENV_ROOT=\""+filepath.Join(root, "pyenv")+"\"\nexec \""+filepath.Join(root, "pyenv")+"/libexec/pyenv\" exec \"$program\" \"$@\"\n", 0o755)
	put("pyenv/version", "3.11.7\n", 0o644)
	copyELF(plain, "pyenv/versions/3.11.7/bin/python3")
	copyELF(mpich, "pyenv/versions/3.11.7/lib/python3.11/site-packages/mpi4py/"+so)
	// The job's files.
	put("work/hello.py", "#!/usr/bin/env python3\nimport sys\nfrom mpi4py import MPI\nprint(MPI.COMM_WORLD.Get_rank())\n", 0o755)
	put("work/plain.py", "import numpy\nprint('no MPI here')  # mpi4py in a comment\n", 0o644)
	put("work/mypkg/run.py", "import os, mpi4py.MPI as M\n", 0o644)
	put("work/wrap.sh", "#!/bin/sh\nset -e\nexport OMP_NUM_THREADS=1\nexec python3 hello.py \"$@\"\n", 0o755)
	put("work/loop.sh", "#!/bin/sh\nfor i in 1 2; do ./prog $i; done\n", 0o755)
	put("work/run.R", "suppressMessages(library(\"Rmpi\"))\nmpi.comm.rank()\n", 0o644)
	put("work/mpi.jl", "using MPI\nMPI.Init()\n", 0o644)
	put("work/nompi.jl", "using LinearAlgebra, MPIPreferences\n", 0o644)
	put("home/.julia/environments/v1.10/LocalPreferences.toml", "[MPIPreferences]\n_format = \"1.0\"\nabi = \"OpenMPI\"\nbinary = \"system\"\n", 0o644)
	put("proj/Project.toml", "[deps]\n", 0o644)
	put("proj/LocalPreferences.toml", "[Other]\nbinary = \"OpenMPI_jll\"\n[MPIPreferences]\nbinary = \"MPICH_jll\"\n", 0o644)
	return root
}

func TestScanProgram(t *testing.T) {
	t.Parallel()
	root := progTree(t)
	r := func(rel string) string { return filepath.Join(root, rel) }
	py := r("usr/bin/python3")
	tests := []struct {
		name string
		argv []string
		env  map[string]string
		mpi  string
		via  string // a part of Via
	}{
		{name: "ELF linking MPICH", argv: []string{r("usr/bin/mpich_prog")}, mpi: "mpich", via: "libmpich.so.12"},
		{name: "ELF linking no MPI", argv: []string{r("usr/bin/plain")}, mpi: "none"},
		{name: "python -m mpi4py.bench", argv: []string{py, "-m", "mpi4py.bench", "helloworld"}, mpi: "openmpi", via: "dist-packages/mpi4py/MPI."},
		{name: "python -mmpi4py", argv: []string{py, "-u", "-mmpi4py", "hello.py"}, mpi: "openmpi"},
		{name: "script importing mpi4py", argv: []string{py, "hello.py"}, mpi: "openmpi", via: "libmpi.so.40"},
		{name: "module importing mpi4py", argv: []string{py, "-m", "mypkg.run"}, mpi: "openmpi"},
		{name: "python -c", argv: []string{py, "-c", "import mpi4py.MPI; print(1)"}, mpi: "openmpi"},
		{name: "script without mpi4py", argv: []string{py, "plain.py"}, via: "imports no mpi4py"},
		{name: "missing script", argv: []string{py, "nosuch.py"}, via: "nosuch.py"},
		{name: "venv's own mpi4py", argv: []string{r("venv/bin/python3"), "hello.py"}, mpi: "mpich", via: "venv/lib/python3.11/site-packages"},
		{name: "venv with system packages", argv: []string{r("venv2/bin/python3"), "hello.py"}, mpi: "openmpi"},
		{name: "PYTHONPATH first", argv: []string{py, "hello.py"}, env: map[string]string{"PYTHONPATH": r("pp")}, mpi: "mpich"},
		{name: "python -E ignores PYTHONPATH", argv: []string{py, "-E", "hello.py"}, env: map[string]string{"PYTHONPATH": r("pp")}, mpi: "openmpi"},
		{name: "#!/usr/bin/env python3", argv: []string{r("work/hello.py")}, mpi: "openmpi"},
		{name: "shell wrapper execs python", argv: []string{r("work/wrap.sh"), "x"}, mpi: "openmpi", via: "wrap.sh execs"},
		{name: "sh -c ... && exec prog", argv: []string{"/bin/sh", "-c", "ulimit -S -n 4096 && exec mpich_prog 10"}, mpi: "mpich"},
		{name: "shell loop stays unknown", argv: []string{r("work/loop.sh")}, via: "execs no program"},
		{name: "env NAME=V prog", argv: []string{"/usr/bin/env", "OMP_NUM_THREADS=2", "mpich_prog"}, mpi: "mpich"},
		{name: "pyenv shim", argv: []string{r("pyenv/shims/python3"), "hello.py"}, mpi: "mpich", via: "pyenv/versions/3.11.7"},
		{name: "pyenv shim, PYENV_VERSION system", argv: []string{r("pyenv/shims/python3"), "hello.py"},
			env: map[string]string{"PYENV_VERSION": "system", "PATH": r("pyenv/shims") + ":" + r("usr/bin")}, mpi: "openmpi"},
		{name: "Rscript with Rmpi", argv: []string{r("usr/bin/Rscript"), "--vanilla", "run.R"}, env: map[string]string{"R_LIBS": r("rlib")}, mpi: "openmpi", via: "Rmpi"},
		{name: "Rscript without Rmpi installed", argv: []string{r("usr/bin/Rscript"), "run.R"}, via: "Rmpi not found"},
		{name: "Rscript -e without MPI", argv: []string{r("usr/bin/Rscript"), "-e", "x <- 1"}, via: "loads no Rmpi"},
		{name: "julia, system Open MPI", argv: []string{r("usr/bin/julia"), "-t", "2", "mpi.jl"}, mpi: "openmpi", via: "LocalPreferences.toml"},
		{name: "julia, project's MPICH_jll", argv: []string{r("usr/bin/julia"), "--project=" + r("proj"), "mpi.jl"}, mpi: "mpich"},
		{name: "julia without MPI.jl", argv: []string{r("usr/bin/julia"), "nompi.jl"}, via: "uses no MPI.jl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"PATH": r("usr/bin") + ":/usr/bin:/bin", "HOME": r("home")}
			for k, v := range tt.env {
				vars[k] = v
			}
			p, err := ScanProgram(tt.argv, ProgramEnv{Getenv: func(k string) string { return vars[k] }, Workdir: r("work")})
			if err != nil {
				t.Fatalf("ScanProgram(%q): %v", tt.argv, err)
			}
			if p.MPI != tt.mpi || !strings.Contains(p.Via, tt.via) {
				t.Errorf("ScanProgram(%q) = MPI %q via %q; want %q via ...%s...", tt.argv, p.MPI, p.Via, tt.mpi, tt.via)
			}
		})
	}
}

func TestScanProgram_MissingProgram(t *testing.T) {
	t.Parallel()
	_, err := ScanProgram([]string{"no-such-program-here"}, ProgramEnv{Getenv: func(string) string { return "/nonexistent" }})
	if err == nil || !strings.Contains(err.Error(), "no-such-program-here") {
		t.Fatalf("err = %v, want one naming the program", err)
	}
}
