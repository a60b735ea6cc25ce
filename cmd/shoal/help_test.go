package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// visibleCommands walks every command a user sees in --help, with its
// full name ("shoal operator raft list-peers").
func visibleCommands(fn func(path string, c *cli.Command)) {
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			fn(path+" "+c.Name, c)
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("shoal", newApp(nil, nil).Commands)
}

// Every command's --help ends with examples that run it (or, for a command
// of subcommands, one of them), as a reader learns faster from a line to
// copy than from a list of flags.
func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	visibleCommands(func(path string, c *cli.Command) {
		_, examples, ok := strings.Cut(c.Description, "Example")
		if !ok {
			t.Errorf("%s --help has no examples", path)
			return
		}
		// A Slurm personality is run by its own name (sbatch, squeue).
		own := path
		if slices.Contains(slurmPersonalities, c.Name) {
			own = c.Name
		}
		for _, l := range strings.Split(examples, "\n") {
			if l := strings.TrimSpace(l) + " "; strings.HasPrefix(l, path+" ") || strings.HasPrefix(l, own+" ") {
				return
			}
		}
		t.Errorf("%s --help's examples show no line running %s", path, path)
	})
}

// No flag's help line gives two defaults (one in its usage, one that
// urfave/cli appends from its value).
func TestNoFlagPrintsTwoDefaults(t *testing.T) {
	t.Parallel()
	visibleCommands(func(path string, c *cli.Command) {
		for _, f := range c.Flags {
			if s := f.String(); strings.Count(s, "(default") > 1 {
				t.Errorf("%s: %s", path, s)
			}
		}
	})
}

var (
	quotedPointer = regexp.MustCompile(`'shoal ([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?:[\s']|$)`)
	tickedPointer = regexp.MustCompile("`shoal ([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?:[\\s`]|$)")
	// An example in help text is indented; in the docs it is a line of a
	// code block.
	exampleLine = regexp.MustCompile(`(?m)^  +(?:\$ |[a-z_]+=\$\()?shoal ([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?:\s|$)`)
	codeLine    = regexp.MustCompile(`(?m)^\s*(?:\$ |[a-z_]+=\$\()?shoal ([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?:\s|$)`)
	codeBlock   = regexp.MustCompile("(?ms)^\\s*```[^\n]*\n(.*?)^\\s*```")
)

// commandExists reports whether the words after "shoal" start with a
// command, and, for a command of subcommands, go on with one of them.
func commandExists(app *cli.App, words []string) bool {
	cmds := app.Commands
	for i, w := range words {
		var found *cli.Command
		for _, c := range cmds {
			if c.HasName(w) {
				found = c
			}
		}
		if found == nil {
			// A word after a leaf command is its argument; the first
			// word, or one after a command of subcommands, must be one.
			return i > 0 && len(cmds) == 0
		}
		cmds = found.Subcommands
		if len(cmds) == 0 {
			return true
		}
	}
	return true
}

// Every pointer to another command — in help text and error messages
// ('see shoal node drain --help'), and in the README's and the docs' code
// and examples — names a command that exists.
func TestHelpPointersNameCommands(t *testing.T) {
	t.Parallel()
	app := newApp(nil, nil)
	check := func(where, text string, res ...*regexp.Regexp) {
		for _, re := range res {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				if m[1] == "cluster" {
					continue // the derived CA's common name, "shoal cluster CA"
				}
				if !commandExists(app, strings.Fields(m[1])) {
					t.Errorf("%s points at 'shoal %s', which is no command", where, m[1])
				}
			}
		}
	}
	// Help and messages: every string literal of the command's source.
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				if err == nil {
					check(fset.Position(lit.Pos()).String(), s, quotedPointer, exampleLine)
				}
			}
			return true
		})
	}
	// The documentation a user reads.
	docs := []string{"../../README.md", "../../SECURITY.md"}
	for _, dir := range []string{"../../docs", "../../examples"} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".sh")) {
				docs = append(docs, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.HasSuffix(p, ".sh") {
			check(p, text, codeLine)
			continue
		}
		check(p, text, quotedPointer, tickedPointer)
		for _, m := range codeBlock.FindAllStringSubmatch(text, -1) {
			check(p, m[1], codeLine)
		}
	}
}

// docs/user/cli.md is what 'shoal gen markdown' prints, so the reference
// on the web is the one the binary holds.
func TestCLIReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	want, err := cliReference(newApp(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/user/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/user/cli.md is not the CLI's reference: run 'go run ./cmd/shoal gen markdown > docs/user/cli.md'")
	}
}
