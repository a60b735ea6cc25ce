package probe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Program is what shoal can tell about a job's program before it runs:
// the libraries of the file that runs, and which MPI the program speaks
// when the executable is an interpreter (Python, R, Julia, a shell) whose
// MPI comes from a binding it loads, not from its own DT_NEEDED.
type Program struct {
	// ELF is the scan of the first ELF file on the way (the interpreter of
	// a script); its GPU runtime decides the default --pe.
	ELF ELFInfo
	// MPI is "mpich", "openmpi", "none" (an ELF program that links no MPI)
	// or "" when it cannot be told: an interpreted program that loads no
	// MPI binding shoal knows may still reach MPI through a module of its
	// own, so it is not "none".
	MPI string
	// Via says how MPI was found, or why it could not be:
	// "mpi4py: .../MPI.cpython-311-x86_64-linux-gnu.so links libmpi.so.40".
	Via string
}

// ProgramEnv is what a program scan reads besides files: the job's
// environment and where relative names resolve.
type ProgramEnv struct {
	// Getenv returns a variable of the job's environment (PATH, PYTHONPATH,
	// R_LIBS, JULIA_PROJECT, HOME...).
	Getenv func(string) string
	// Workdir is the job's working directory, where relative paths resolve.
	Workdir string
}

// maxScriptBytes bounds how much of a script is read for its imports;
// binding imports sit at the top of a program.
const maxScriptBytes = 1 << 20

// maxFollow bounds the chain of interpreters and wrappers followed
// (#!/usr/bin/env python3 is two steps).
const maxFollow = 6

// ScanProgram tells the MPI flavour and GPU needs of argv, the job's
// command line with argv[0] resolved to a path. It follows #! lines, env,
// and a shell's final literal `exec PROG`; for python, Rscript/R and julia
// it finds the MPI binding the program imports (mpi4py, Rmpi or pbdMPI,
// MPI.jl) and reads which MPI library the binding's compiled extension
// links. It reads files only; it never runs the interpreter.
func ScanProgram(argv []string, env ProgramEnv) (Program, error) {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	return scanProgram(argv, env, 0)
}

func scanProgram(argv []string, env ProgramEnv, depth int) (Program, error) {
	if len(argv) == 0 {
		return Program{Via: "empty command"}, nil
	}
	if depth > maxFollow {
		return Program{Via: "too many interpreters and wrappers to follow"}, nil
	}
	path, err := lookProgram(argv[0], env)
	if err != nil {
		return Program{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Program{}, fmt.Errorf("scan program: %w", err)
	}
	defer f.Close()
	info, err := ScanELFReader(f)
	if errors.Is(err, ErrNotELF) {
		head, rerr := readHead(f)
		if rerr != nil {
			return Program{}, fmt.Errorf("scan program %s: %w", path, rerr)
		}
		if real, ok := pyenvShim(path, head, env); ok {
			return scanProgram(append([]string{real}, argv[1:]...), env, depth+1)
		}
		interp, ok := shebang(head)
		if !ok {
			return Program{Via: filepath.Base(path) + " is neither an ELF file nor a #! script"}, nil
		}
		return scanProgram(append(append(interp, path), argv[1:]...), env, depth+1)
	}
	if err != nil {
		return Program{}, fmt.Errorf("scan program %s: %w", path, err)
	}
	if info.MPI != "" {
		return Program{ELF: info, MPI: info.MPI, Via: filepath.Base(path) + " links " + mpiLib(info)}, nil
	}
	p := Program{ELF: info, MPI: "none", Via: filepath.Base(path) + " links no MPI library"}
	var inner Program
	switch name := filepath.Base(argv[0]); {
	case pythonName.MatchString(name):
		inner, err = scanPython(path, argv[1:], env)
	case name == "Rscript" || name == "R":
		inner, err = scanR(name, argv[1:], env)
	case name == "julia":
		inner, err = scanJulia(argv[1:], env)
	case shellNames[name]:
		inner, err = scanShell(argv[1:], env, depth)
	case name == "env":
		inner, err = scanEnv(argv[1:], env, depth)
	default:
		return p, nil
	}
	if err != nil {
		return Program{}, err
	}
	if inner.ELF.Needed == nil {
		// An interpreter's binding leaves the GPU to the interpreter's scan;
		// a wrapper's target (sh -c 'exec ./cuda_app') brings its own.
		inner.ELF = info
	}
	return inner, nil
}

// mpiLib is the first MPI library among info's needed ones.
func mpiLib(info ELFInfo) string {
	for _, lib := range info.Needed {
		if mpiFlavour(lib) != "" {
			return lib
		}
	}
	return "an MPI library"
}

// lookProgram resolves a command name as the job's exec would: a name
// with a slash relative to the working directory, others on the job's PATH.
func lookProgram(name string, env ProgramEnv) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(env.Workdir, name)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(env.Workdir, dir)
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("scan program: %q not found on the job's PATH", name)
}

// readHead reads the start of a file whose first bytes are already known
// not to be ELF.
func readHead(f io.ReaderAt) ([]byte, error) {
	buf := make([]byte, maxScriptBytes)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// shebang splits a #! line as the kernel does: the interpreter and at most
// one argument (everything after the first blank).
func shebang(head []byte) ([]string, bool) {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return nil, false
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	line = bytes.TrimSpace(line)
	interp, arg, _ := bytes.Cut(line, []byte(" "))
	if len(interp) == 0 {
		return nil, false
	}
	out := []string{string(interp)}
	if a := strings.TrimSpace(string(arg)); a != "" {
		out = append(out, a)
	}
	return out, true
}

// readScript returns up to maxScriptBytes of a script the program runs.
func readScript(path string, env ProgramEnv) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Workdir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("scan program: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScriptBytes))
	if err != nil {
		return "", fmt.Errorf("scan program %s: %w", path, err)
	}
	return string(b), nil
}

// bindingFlavour reads the MPI flavour from the compiled extension of a
// binding (mpi4py's MPI.*.so, Rmpi.so): the library it links.
func bindingFlavour(binding, so string) Program {
	info, err := ScanELF(so)
	if err != nil {
		return Program{Via: fmt.Sprintf("%s: %s: %v", binding, so, err)}
	}
	if info.MPI == "" {
		return Program{Via: fmt.Sprintf("%s: %s links no MPI library shoal knows", binding, so)}
	}
	return Program{MPI: info.MPI, Via: fmt.Sprintf("%s: %s links %s", binding, so, mpiLib(info))}
}

// shellNames are the shells whose -c strings and scripts are followed.
var shellNames = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// execLine is a shell's `exec PROG ARGS` with PROG a literal word, the
// wrapper's usual last line (`exec ./solver "$@"`).
var execLine = regexp.MustCompile(`(?m)(?:^|&&|;|\|\|)\s*exec\s+([A-Za-z0-9_./+-]+)((?:[ \t]+[^\n;&|]*)?)`)

// scanShell follows a shell's -c string or script to the program it
// finally execs, when that is a literal name; a wrapper that runs its
// program any other way stays unknown.
func scanShell(args []string, env ProgramEnv, depth int) (Program, error) {
	var text, what string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" && i+1 < len(args):
			text, what = args[i+1], "sh -c"
		case a == "--":
			continue
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			continue
		default:
			s, err := readScript(a, env)
			if err != nil {
				return Program{Via: err.Error()}, nil
			}
			text, what = s, filepath.Base(a)
		}
		break
	}
	if what == "" {
		return Program{Via: "a shell reading commands from its input"}, nil
	}
	m := execLine.FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return Program{Via: what + " execs no program by a literal name"}, nil
	}
	last := m[len(m)-1]
	argv := append([]string{last[1]}, strings.Fields(last[2])...)
	p, err := scanProgram(argv, env, depth+1)
	if err != nil {
		return Program{Via: fmt.Sprintf("%s execs %s: %v", what, last[1], err)}, nil
	}
	p.Via = what + " execs " + p.Via
	return p, nil
}

// scanEnv follows env(1): options and NAME=VALUE words, then the program.
func scanEnv(args []string, env ProgramEnv, depth int) (Program, error) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if split, ok := strings.CutPrefix(a, "-S"); ok {
			// #!/usr/bin/env -S python3 -u: one word the kernel passed whole.
			if split == "" && i+1 < len(args) {
				i++
				split = args[i]
			}
			return scanProgram(append(strings.Fields(split), args[i+1:]...), env, depth+1)
		}
		if a == "-u" || a == "-C" || a == "--unset" || a == "--chdir" {
			i++ // takes a value
			continue
		}
		if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
			continue
		}
		break
	}
	if i >= len(args) {
		return Program{MPI: "none", Via: "env runs no program"}, nil
	}
	p, err := scanProgram(args[i:], env, depth+1)
	if err != nil {
		return Program{Via: "env runs " + args[i] + ": " + err.Error()}, nil
	}
	return p, nil
}

// pyenvShimLine is the line of a pyenv shim that hands over to pyenv.
var pyenvShimLine = regexp.MustCompile(`(?m)^exec "([^"]*)/libexec/pyenv" exec "\$program"`)

// pyenvShim resolves a pyenv shim (PYENV_ROOT/shims/python3, a bash
// script that asks pyenv which interpreter to run) to the interpreter it
// would run: PYENV_VERSION, else the nearest .python-version above the
// working directory, else PYENV_ROOT/version; "system" is the next one on
// PATH after the shims.
func pyenvShim(path string, head []byte, env ProgramEnv) (string, bool) {
	m := pyenvShimLine.FindSubmatch(head)
	if m == nil {
		return "", false
	}
	root, name := string(m[1]), filepath.Base(path)
	version := env.Getenv("PYENV_VERSION")
	for d := env.Workdir; version == "" && d != ""; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, ".python-version")); err == nil {
			version = string(b)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if version == "" {
		b, _ := os.ReadFile(filepath.Join(root, "version"))
		version = string(b)
	}
	// Several versions may be listed; the first that has the command wins
	// in pyenv, and the first is what a lab's files name in practice.
	fields := strings.Fields(version)
	if len(fields) == 0 || fields[0] == "system" {
		shims := filepath.Dir(path)
		for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
			p := filepath.Join(dir, name)
			if filepath.Clean(dir) == shims {
				continue
			}
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				return p, true
			}
		}
		return "", false
	}
	return filepath.Join(root, "versions", fields[0], "bin", name), true
}
