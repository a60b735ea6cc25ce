package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Batch scripts: `shoal submit job.sh` reads the #SHOAL lines
// at the top of the script as job flags, as sbatch reads #SBATCH lines.

// directivePrefix starts a directive line.
const directivePrefix = "#SHOAL"

// What a script may set. A script is data from whoever wrote it, and the
// one who submits it may be root or a portal holding the cluster token: a
// directive that chose the agent's address or the credentials (--addr,
// --ca-file, --token-file, ...) would send the submitter's token and
// environment to a server of the script author's choosing. Directives
// therefore set the job's own options and nothing else. scriptOptions is
// the one place that decides; every directive dialect the reader takes
// parses its lines against it.

// scriptOptions are the flags a directive may set: the job's options.
func scriptOptions() []cli.Flag { return jobOptionFlags() }

// scriptRefusal says why a directive may not set the flag name (without
// dashes), or "" when the flag is simply not one shoal knows.
func scriptRefusal(name string) string {
	for _, f := range clientFlags() {
		if slices.Contains(f.Names(), name) {
			return fmt.Sprintf("%s is a connection or credential flag: a script may set job options only (give it on the command line or in the environment)", dashed(name))
		}
	}
	return ""
}

// dashed writes a flag's name as it is typed: -n, --np.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// parseDirectives reads the #SHOAL and #SBATCH lines of a script: after
// the #! line, among comments and blank lines, up to the first command
// (sbatch stops there too). #SBATCH lines are translated into job options
// (translateSbatch) and come first, so that a #SHOAL line wins over them
// where both set an option. Each line's words are checked against
// scriptOptions, so an unknown flag or a bad value is reported with the
// file and line, and a connection or credential flag is refused in either
// dialect. It returns the flags in order, and whether the script had any
// directive; a script with #SBATCH lines gets --slurm-script first, for
// Slurm's defaults.
func parseDirectives(name string, script io.Reader) ([]string, bool, error) {
	return readDirectives(name, script, nil)
}

// parseDirectivesWith is parseDirectives for a script given to sbatch
// with options before it: they are read as one more #SBATCH line after
// the script's (sbatch's command line wins over its directives, and
// sizes itself with them: -N 2 on the command line beside
// --ntasks-per-node=4 in the script), and the script gets Slurm's
// defaults whether or not it holds a #SBATCH line.
func parseDirectivesWith(name string, script io.Reader, cmdline []string) ([]string, error) {
	words, _, err := readDirectives(name, script, append([]string{}, cmdline...))
	return words, err
}

// readDirectives is parseDirectives with sbatch's command-line options
// (nil: not submitted through sbatch).
func readDirectives(name string, script io.Reader, cmdline []string) ([]string, bool, error) {
	flags := scriptOptions()
	var slurm, own []string
	var size sbatchSize
	found, isSlurm := false, false
	sc := bufio.NewScanner(script)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || (n == 1 && strings.HasPrefix(line, "#!")) {
			continue
		}
		prefix := ""
		for _, p := range []string{directivePrefix, sbatchPrefix} {
			if rest, ok := strings.CutPrefix(line, p); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				prefix = p
			}
		}
		if prefix == "" {
			if strings.HasPrefix(line, "#") {
				continue // a comment (or #SHOALX: not ours)
			}
			break // the first command ends the directives
		}
		found = true
		words, err := shellWords(line[len(prefix):])
		if err != nil {
			return nil, true, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if prefix == sbatchPrefix {
			isSlurm = true
			if words, err = translateSbatch(words, n, &size); err != nil {
				return nil, true, fmt.Errorf("%s:%d: %w", name, n, err)
			}
		}
		if err := checkDirective(words, flags); err != nil {
			return nil, true, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if prefix == sbatchPrefix {
			slurm = append(slurm, words...)
		} else {
			own = append(own, words...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, found, fmt.Errorf("read %s: %w", name, err)
	}
	if cmdline != nil {
		found, isSlurm = true, true
		words, err := translateSbatch(cmdline, 0, &size)
		if err == nil {
			err = checkDirective(words, flags)
		}
		if err != nil {
			return nil, true, fmt.Errorf("sbatch: %w", err)
		}
		own = append(own, words...) // last: the command line wins
	}
	if !isSlurm {
		return own, found, nil
	}
	sized, err := size.words()
	if err == nil {
		err = checkDirective(sized, flags)
	}
	if err != nil {
		if size.line == 0 {
			return nil, true, fmt.Errorf("sbatch: %w", err)
		}
		return nil, true, fmt.Errorf("%s:%d: %w", name, size.line, err)
	}
	return slices.Concat([]string{"--slurm-script"}, sized, slurm, own), true, nil
}

// checkDirective parses one directive line's words with the job flags.
func checkDirective(words []string, flags []cli.Flag) error {
	fs := flag.NewFlagSet("directive", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range flags {
		if err := f.Apply(fs); err != nil {
			return err
		}
	}
	err := fs.Parse(words)
	if err != nil {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			name = strings.TrimLeft(name, "-")
			if why := scriptRefusal(name); why != "" {
				return errors.New(why)
			}
			msg := "unknown flag " + dashed(name)
			var names []string
			for _, f := range flags {
				for _, n := range f.Names() {
					names = append(names, dashed(n))
				}
			}
			if s := nearest(dashed(name), names); s != "" {
				msg += "; did you mean " + s + "?"
			}
			return fmt.Errorf("%s (see 'shoal submit --help')", msg)
		}
		return errors.New(msg)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: a directive holds flags only", fs.Arg(0))
	}
	return nil
}

// shellWords splits a directive as a shell would its words: blanks
// separate, single quotes keep everything, double quotes keep all but
// backslash escapes, a backslash escapes the next character. A # outside
// quotes starts a comment.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// expandScript puts the directives of a batch script before the flags of
// `shoal submit ... job.sh` (reordered: flags first), so that a flag on
// the command line overrides the script's (the last value given wins), and
// marks the job --batch. Anything else is returned as it was.
func expandScript(app *cli.App, args []string) ([]string, error) {
	if len(args) < 3 || args[1] != "submit" {
		return args, nil
	}
	cmd := app.Command("submit")
	i := 2
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue(cmd, name) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args, nil
	}
	path := args[i]
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return args, nil
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("#!")) {
		return args, nil // not a script: a program, as before
	}
	words, found, err := parseDirectives(path, bytes.NewReader(b))
	if err != nil {
		return nil, cli.Exit(err.Error(), exitUsage)
	}
	if !found {
		return args, nil
	}
	out := slices.Concat(args[:2], words, []string{"--batch"}, args[2:])
	return out, nil
}

// scriptCommand runs a script that is not executable through the
// interpreter of its #! line (or /bin/sh), as sbatch does.
func scriptCommand(path string) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	first, _ := bufio.NewReader(f).ReadString('\n')
	interp, ok := strings.CutPrefix(strings.TrimSpace(first), "#!")
	words := strings.Fields(interp)
	if !ok || len(words) == 0 {
		words = []string{"/bin/sh"}
	}
	return append(words, abs), nil
}

// exportEnv is the submitter's environment a job carries (--export, as
// sbatch's): ALL (the default), NONE, or names (their values here) and
// NAME=VALUE pairs, after ALL or alone. shoal's own variables (SHOAL_*)
// are never carried: every job gets its own, and a token must not travel
// in a job's spec. ALL leaves them out; naming one is refused, since the
// names include the CLI's credentials (SHOAL_TOKEN, SHOAL_TOKEN_FILE,
// SHOAL_KEY_FILE, a job's SHOAL_JOB_CAP) and a script's `--export
// ALL,SHOAL_TOKEN` would copy its submitter's token into the job.
func exportEnv(what string, environ []string) ([]string, error) {
	var out []string
	own := func(kv string) bool { return strings.HasPrefix(kv, "SHOAL_") }
	for i, item := range strings.Split(what, ",") {
		item = strings.TrimSpace(item)
		if own(item) {
			name, _, _ := strings.Cut(item, "=")
			return nil, fmt.Errorf("--export %q: %s is shoal's own (a credential, an address or a job's setting): it never travels in a job", what, name)
		}
		switch {
		case item == "ALL" && i == 0:
			out = slices.DeleteFunc(slices.Clone(environ), own)
		case item == "NONE" && i == 0:
		case item == "" || item == "ALL" || item == "NONE":
			return nil, fmt.Errorf("--export %q: ALL or NONE comes first and alone, then VAR or VAR=VALUE items", what)
		case strings.Contains(item, "="):
			if k, _, _ := strings.Cut(item, "="); k == "" {
				return nil, fmt.Errorf("--export %q: %q has no name", what, item)
			}
			out = append(out, item)
		default:
			for _, kv := range environ {
				if k, _, _ := strings.Cut(kv, "="); k == item {
					out = append(out, kv)
				}
			}
		}
	}
	return out, nil
}
