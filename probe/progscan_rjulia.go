package probe

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// loadsRMPI finds library(Rmpi), require("pbdMPI"), requireNamespace(...)
// in R source; the submatch is the package.
var loadsRMPI = regexp.MustCompile(`\b(?:library|require|requireNamespace)\s*\(\s*["']?(Rmpi|pbdMPI)\b`)

// scanR tells which MPI an R program uses through Rmpi or pbdMPI, whose
// shared object links the MPI library the package was built against.
func scanR(name string, args []string, env ProgramEnv) (Program, error) {
	var source, code string
	for i := 0; i < len(args) && source == ""; i++ {
		a := args[i]
		switch {
		case a == "-e" && i+1 < len(args):
			code += args[i+1] + "\n"
			i++
		case a == "-f" && i+1 < len(args):
			source = args[i+1]
		case strings.HasPrefix(a, "--file="):
			source = strings.TrimPrefix(a, "--file=")
		case a == "CMD" && i+2 < len(args) && args[i+1] == "BATCH":
			i += 2
			for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
			}
			if i < len(args) {
				source = args[i]
			}
		case strings.HasPrefix(a, "-"):
		case name == "Rscript":
			source = a
		}
	}
	what := name + " -e"
	if source != "" {
		text, err := readScript(source, env)
		if err != nil {
			return Program{Via: err.Error()}, nil
		}
		code, what = code+text, "R script "+filepath.Base(source)
	}
	if code == "" {
		return Program{Via: "an R program read from standard input"}, nil
	}
	m := loadsRMPI.FindStringSubmatch(code)
	if m == nil {
		return Program{Via: what + " loads no Rmpi or pbdMPI"}, nil
	}
	pkg := m[1]
	for _, lib := range rLibPaths(env) {
		so := filepath.Join(lib, pkg, "libs", pkg+".so")
		if _, err := os.Stat(so); err == nil {
			return bindingFlavour(pkg, so), nil
		}
	}
	return Program{Via: pkg + " not found in R's libraries"}, nil
}

// rLibPaths is R's .libPaths() without running R: R_LIBS, the user's
// library (R_LIBS_USER, else ~/R/PLATFORM-library/X.Y), R_LIBS_SITE, then
// Debian's site and system libraries.
func rLibPaths(env ProgramEnv) []string {
	var dirs []string
	for _, v := range []string{"R_LIBS", "R_LIBS_USER"} {
		dirs = append(dirs, filepath.SplitList(env.Getenv(v))...)
	}
	if env.Getenv("R_LIBS_USER") == "" && env.Getenv("HOME") != "" {
		user, _ := filepath.Glob(filepath.Join(env.Getenv("HOME"), "R", "*-library", "*"))
		sort.Sort(sort.Reverse(sort.StringSlice(user))) // the newest R first
		dirs = append(dirs, user...)
	}
	dirs = append(dirs, filepath.SplitList(env.Getenv("R_LIBS_SITE"))...)
	return append(dirs, "/usr/local/lib/R/site-library", "/usr/lib/R/site-library", "/usr/lib/R/library")
}

// usesMPIjl finds `using MPI` or `import MPI` (MPIPreferences is another
// package: \b stops at it).
var usesMPIjl = regexp.MustCompile(`(?m)^[ \t]*(?:using|import)[ \t][^\n#]*\bMPI\b`)

// scanJulia tells which MPI a Julia program uses through MPI.jl: the
// MPIPreferences of its project (LocalPreferences.toml), or MPI.jl's
// default, its own MPICH (MPICH_jll), when there are none.
func scanJulia(args []string, env ProgramEnv) (Program, error) {
	project := env.Getenv("JULIA_PROJECT")
	var source, code string
	for i := 0; i < len(args) && source == ""; i++ {
		a := args[i]
		switch {
		case (a == "-e" || a == "-E" || a == "--eval") && i+1 < len(args):
			code += args[i+1] + "\n"
			i++
		case strings.HasPrefix(a, "--project"):
			project = strings.TrimPrefix(strings.TrimPrefix(a, "--project"), "=")
			if project == "" {
				project = "@."
			}
		case a == "-t" || a == "-p" || a == "-C" || a == "-J" || a == "-L" || a == "--threads" || a == "--procs":
			i++ // takes a value
		case strings.HasPrefix(a, "-"):
		default:
			source = a
		}
	}
	what := "julia -e"
	if source != "" {
		text, err := readScript(source, env)
		if err != nil {
			return Program{Via: err.Error()}, nil
		}
		code, what = code+text, "julia script "+filepath.Base(source)
	}
	if !usesMPIjl.MatchString(code) {
		return Program{Via: what + " uses no MPI.jl"}, nil
	}
	prefs := juliaPreferences(project, env)
	kv := tomlSection(prefs, "MPIPreferences", "binary", "abi")
	binary, abi := kv[0], kv[1]
	via := "MPI.jl (" + prefs + ")"
	if prefs == "" {
		return Program{MPI: "mpich", Via: "MPI.jl with no MPIPreferences: its default MPICH_jll"}, nil
	}
	switch {
	case binary == "MPICH_jll" || binary == "system" && abi == "MPICH":
		return Program{MPI: "mpich", Via: via}, nil
	case binary == "OpenMPI_jll" || binary == "system" && abi == "OpenMPI":
		return Program{MPI: "openmpi", Via: via}, nil
	case binary == "":
		return Program{MPI: "mpich", Via: via + " sets no binary: MPI.jl's default MPICH_jll"}, nil
	}
	return Program{Via: via + ": binary " + binary + " abi " + abi + " is neither MPICH nor Open MPI"}, nil
}

// juliaPreferences finds the LocalPreferences.toml of the active project:
// --project or JULIA_PROJECT (@. searches up from the working directory),
// else the depot's default environment.
func juliaPreferences(project string, env ProgramEnv) string {
	var cands []string
	switch project {
	case "":
	case "@.":
		for d := env.Workdir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "Project.toml")); err == nil {
				cands = append(cands, d)
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	default:
		if !filepath.IsAbs(project) {
			project = filepath.Join(env.Workdir, project)
		}
		cands = append(cands, project)
	}
	depot := filepath.Join(env.Getenv("HOME"), ".julia")
	if dp := filepath.SplitList(env.Getenv("JULIA_DEPOT_PATH")); len(dp) > 0 && dp[0] != "" {
		depot = dp[0]
	}
	envs, _ := filepath.Glob(filepath.Join(depot, "environments", "v*"))
	sort.Sort(sort.Reverse(sort.StringSlice(envs)))
	for _, d := range append(cands, envs...) {
		p := filepath.Join(d, "LocalPreferences.toml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// tomlSection reads string keys of one [section] of a TOML file; enough
// for MPIPreferences' flat `key = "value"` lines.
func tomlSection(path, section string, keys ...string) []string {
	vals := make([]string, len(keys))
	f, err := os.Open(path)
	if err != nil {
		return vals
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = line == "["+section+"]"
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !in || !ok {
			continue
		}
		for i, want := range keys {
			if strings.TrimSpace(k) == want {
				vals[i] = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	}
	return vals
}
