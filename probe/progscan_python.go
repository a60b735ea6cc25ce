package probe

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// pythonName matches the interpreters scanPython reads: python, python3,
// python3.11.
var pythonName = regexp.MustCompile(`^python[0-9.]*$`)

// importsMPI4Py finds an import of mpi4py in Python source: `import
// mpi4py`, `from mpi4py import MPI`, `import numpy, mpi4py.MPI as M`.
var importsMPI4Py = regexp.MustCompile(`(?m)^[ \t]*(?:from[ \t]+mpi4py\b|import[ \t][^\n#]*\bmpi4py\b)`)

// scanPython tells which MPI a Python program uses: through mpi4py, whose
// compiled MPI module links the MPI library it was built against. The
// program is `-m MODULE`, `-c CODE` or a script; a module or script that
// does not import mpi4py itself is left unknown, since it may reach MPI
// through a package of its own.
func scanPython(interp string, args []string, env ProgramEnv) (Program, error) {
	var (
		source, what, scriptDir string
		noEnv, noUser           bool
	)
	dirs := func() []string { return pythonPath(interp, env, scriptDir, noEnv, noUser) }
loop:
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" || strings.HasPrefix(a, "-m") && !strings.HasPrefix(a, "--"):
			mod := strings.TrimPrefix(a, "-m")
			if mod == "" && i+1 < len(args) {
				mod = args[i+1]
			}
			if mod == "mpi4py" || strings.HasPrefix(mod, "mpi4py.") {
				return mpi4pyFlavour(interp, dirs()), nil
			}
			scriptDir = env.Workdir // -m puts the working directory first
			src := findModule(dirs(), mod)
			if src == "" {
				return Program{Via: "python module " + mod + " not found on the interpreter's path"}, nil
			}
			source, what = src, "python module "+mod
			break loop
		case a == "-c" && i+1 < len(args):
			what = "python -c"
			if importsMPI4Py.MatchString(args[i+1]) {
				return mpi4pyFlavour(interp, dirs()), nil
			}
			return Program{Via: what + " imports no mpi4py"}, nil
		case a == "-X" || a == "-W" || a == "--check-hash-based-pycs":
			i++ // takes a value
		case a == "-" || a == "--":
			if a == "-" {
				return Program{Via: "a python program read from standard input"}, nil
			}
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
			noEnv = noEnv || strings.ContainsAny(a[1:], "EI")
			noUser = noUser || strings.ContainsAny(a[1:], "sI")
		case strings.HasPrefix(a, "--"):
		default:
			source, what = a, "python script "+filepath.Base(a)
			if !filepath.IsAbs(source) {
				source = filepath.Join(env.Workdir, source)
			}
			scriptDir = filepath.Dir(source)
			break loop
		}
	}
	if source == "" {
		return Program{Via: "an interactive python"}, nil
	}
	text, err := readScript(source, env)
	if err != nil {
		return Program{Via: err.Error()}, nil
	}
	if !importsMPI4Py.MatchString(text) {
		return Program{Via: what + " imports no mpi4py"}, nil
	}
	return mpi4pyFlavour(interp, dirs()), nil
}

// mpi4pyFlavour finds the mpi4py package Python would import first and
// reads its compiled MPI module.
func mpi4pyFlavour(interp string, dirs []string) Program {
	for _, d := range dirs {
		pkg := filepath.Join(d, "mpi4py")
		if st, err := os.Stat(pkg); err != nil || !st.IsDir() {
			continue
		}
		sos, _ := filepath.Glob(filepath.Join(pkg, "MPI.*so"))
		if len(sos) == 0 {
			return Program{Via: "mpi4py in " + d + " has no compiled MPI module"}
		}
		return bindingFlavour("mpi4py", sos[0])
	}
	return Program{Via: "mpi4py is not installed for " + interp}
}

// findModule returns the source file of a module on the path: pkg/mod.py
// or the package's __main__.py, as -m runs it.
func findModule(dirs []string, mod string) string {
	rel := filepath.FromSlash(strings.ReplaceAll(mod, ".", "/"))
	for _, d := range dirs {
		for _, cand := range []string{rel + ".py", filepath.Join(rel, "__main__.py")} {
			if st, err := os.Stat(filepath.Join(d, cand)); err == nil && st.Mode().IsRegular() {
				return filepath.Join(d, cand)
			}
		}
	}
	return ""
}

// pythonPath is the interpreter's module search path as Python builds it
// (site.py), without running it: the script's directory, PYTHONPATH, a
// virtual environment's site-packages (and its base's when it includes
// them), the user's site-packages, and the prefix's site- and
// dist-packages (Debian's /usr/local/lib/pythonX.Y/dist-packages and
// /usr/lib/python3/dist-packages).
func pythonPath(interp string, env ProgramEnv, scriptDir string, noEnv, noUser bool) []string {
	var dirs []string
	if scriptDir != "" {
		dirs = append(dirs, scriptDir)
	}
	if pp := env.Getenv("PYTHONPATH"); pp != "" && !noEnv {
		for _, d := range filepath.SplitList(pp) {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	ver := pythonVersion(interp)
	prefix := filepath.Dir(filepath.Dir(interp))
	if home, include, ok := readPyvenv(filepath.Join(prefix, "pyvenv.cfg")); ok {
		dirs = append(dirs, sitePackages(prefix, ver)...)
		if !include {
			return dirs
		}
		prefix = filepath.Dir(home)
	} else if real, err := filepath.EvalSymlinks(interp); err == nil {
		// /usr/bin/python3 -> python3.11: the prefix is the binary's.
		prefix = filepath.Dir(filepath.Dir(real))
	}
	if h := env.Getenv("HOME"); h != "" && !noUser && env.Getenv("PYTHONNOUSERSITE") == "" {
		for _, v := range ver {
			dirs = append(dirs, filepath.Join(h, ".local", "lib", "python"+v, "site-packages"))
		}
	}
	return append(dirs, sitePackages(prefix, ver)...)
}

// sitePackages lists a prefix's package directories, Debian's first.
func sitePackages(prefix string, ver []string) []string {
	var dirs []string
	for _, v := range ver {
		if prefix == "/usr" {
			dirs = append(dirs, filepath.Join("/usr/local/lib", "python"+v, "dist-packages"))
		}
	}
	dirs = append(dirs, filepath.Join(prefix, "lib", "python3", "dist-packages"))
	for _, v := range ver {
		dirs = append(dirs,
			filepath.Join(prefix, "lib", "python"+v, "dist-packages"),
			filepath.Join(prefix, "lib", "python"+v, "site-packages"))
	}
	return dirs
}

// pythonVersion is the interpreter's X.Y, from the name its symlinks end
// at (python3 -> python3.11), else every pythonX.Y under its prefix's lib.
func pythonVersion(interp string) []string {
	if real, err := filepath.EvalSymlinks(interp); err == nil {
		if v := strings.TrimPrefix(filepath.Base(real), "python"); strings.Count(v, ".") == 1 {
			return []string{v}
		}
	}
	libs, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(interp)), "lib", "python3.*"))
	var out []string
	for _, l := range libs {
		out = append(out, strings.TrimPrefix(filepath.Base(l), "python"))
	}
	return out
}

// readPyvenv reads a virtual environment's pyvenv.cfg: the base
// interpreter's directory and whether the base's packages are included.
func readPyvenv(path string) (home string, include, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), "=")
		if !found {
			continue
		}
		switch strings.TrimSpace(k) {
		case "home":
			home = strings.TrimSpace(v)
		case "include-system-site-packages":
			include = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	return home, include, home != ""
}
