package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agentconfig"
)

// The package's man pages and completions come from the CLI itself: every
// command is in shoal(1), every config key in shoal.hcl(5).
func TestGenManAndCompletion(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := shoal(t, nil, "gen", "man", dir); code != exitOK {
		t.Fatalf("gen man: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(dir, "shoal.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{"EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"} {
		if !strings.Contains(string(page), "\n.SH "+sec+"\n") {
			t.Errorf("shoal.1 lacks the %s section", sec)
		}
	}
	for _, c := range newApp(nil, nil).Commands {
		if !c.Hidden && !strings.Contains(string(page), "\n.SH "+c.Name+"\n") {
			t.Errorf("shoal.1 lacks command %s", c.Name)
		}
	}
	conf, err := os.ReadFile(filepath.Join(dir, "shoal.hcl.5"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range agentconfig.Keys() {
		if !strings.Contains(string(conf), `\fB`+roff(k.Name())+`\fR = `) {
			t.Errorf("shoal.hcl.5 lacks key %s", k.Name())
		}
	}
	for shell, want := range map[string]string{"bash": "complete -o bashdefault -o default -F _shoal shoal", "zsh": "#compdef shoal"} {
		out, errOut, code := shoal(t, nil, "gen", "completion", shell)
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("gen completion %s: exit %d, %q, stderr %q", shell, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"gen", "completion", "fish"}, {"gen", "man"}} {
		if _, errOut, code := shoal(t, nil, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		} else {
			oneLine(t, strings.Join(args, " "), errOut)
		}
	}
}
