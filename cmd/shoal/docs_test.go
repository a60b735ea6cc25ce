package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// userDocs are the pages a user copies commands from.
func userDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/user/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../../README.md"}, pages...)
}

var fenceOpen = regexp.MustCompile("^\\s*```(.*)$")

// docBlock is one fenced code block of a page: its info string ("sh",
// "sh example", "text") and its lines.
type docBlock struct {
	page, info string
	line       int
	lines      []string
}

func codeBlocks(t *testing.T, page string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	var cur *docBlock
	for i, l := range strings.Split(string(b), "\n") {
		m := fenceOpen.FindStringSubmatch(l)
		switch {
		case m != nil && cur == nil:
			cur = &docBlock{page: page, info: strings.TrimSpace(m[1]), line: i + 1}
		case m != nil:
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	return out
}

// runnable reports whether the docs test runs a block: a shell block not
// marked "example" (an example needs what a test cannot give: root, a
// package install, a GPU, a larger cluster, or is a script file shown).
func (b docBlock) runnable() bool { return b.info == "sh" }

// Every code block of the README and the user guide says what it is: a
// language, and "example" when the docs test does not run it.
func TestUserDocBlocksAreMarked(t *testing.T) {
	t.Parallel()
	for _, page := range userDocs(t) {
		for _, b := range codeBlocks(t, page) {
			if b.info == "" {
				t.Errorf("%s:%d: a code block without an info string: mark it sh (run by the docs test), sh example, or text", b.page, b.line)
			}
		}
	}
}

var (
	assignment = regexp.MustCompile(`^([a-z_]+)=\$\((shoal .*)\)$`)
	variable   = regexp.MustCompile(`\$([a-z_]+)`)
	comment    = regexp.MustCompile(`\s+#.*$`)
)

// TestUserDocCommandsRun runs every shoal command of the README's and the
// user guide's runnable blocks, in the order a reader would, against a
// live two-node cluster, in a directory holding the example scripts and
// the ring the docs build. Each must exit 0; `id=$(shoal ...)` keeps the
// output for the lines after it, as a shell would.
func TestUserDocCommandsRun(t *testing.T) {
	if _, err := exec.LookPath("mpicc.mpich"); err != nil {
		t.Skip("mpicc.mpich not installed (make deps installs it)")
	}
	dir := t.TempDir()
	scripts, err := filepath.Glob("../../examples/batch/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no example scripts (%v)", err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := exec.Command("mpicc.mpich", "-O2", "-o", filepath.Join(dir, "ring"), "../../examples/mpi/ring.c").CombinedOutput(); err != nil {
		t.Skipf("mpicc.mpich cannot build the ring (%v): %s", err, b)
	}
	var blocks []docBlock
	for _, page := range userDocs(t) {
		for _, b := range codeBlocks(t, page) {
			if b.runnable() {
				blocks = append(blocks, b)
			}
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no runnable block in the user docs")
	}
	c := testcluster.New(t, 2, testcluster.Options{
		Bin:     testcluster.BuildShoal(t),
		Sampler: func(int) probe.Sampler { return idleSampler{} },
		Configure: func(_ int, cfg *agent.Config) {
			cfg.CoallocTimeout = testcluster.Stretch(6 * time.Second) // a loaded 2-core machine reserves slowly
			cfg.Probes.InProcess = true
			cfg.PlacementModelWait = 0 // the docs' jobs need no network model to run
		},
	})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}
	t.Chdir(dir)
	vars := map[string]string{}
	for _, b := range blocks {
		for i, l := range b.lines {
			l = strings.TrimSpace(comment.ReplaceAllString(l, ""))
			name := ""
			if m := assignment.FindStringSubmatch(l); m != nil {
				name, l = m[1], m[2]
			}
			if !strings.HasPrefix(l, "shoal ") {
				continue
			}
			var missing string
			l = variable.ReplaceAllStringFunc(l, func(v string) string {
				val, ok := vars[v[1:]]
				if !ok {
					missing = v
				}
				return val
			})
			where := b.page + ":" + strconv.Itoa(b.line+1+i)
			if missing != "" {
				t.Errorf("%s: %s uses %s, which no line before it set", where, l, missing)
				continue
			}
			out, errOut, code := shoal(t, env, strings.Fields(l)[1:]...)
			if code != 0 {
				t.Errorf("%s: %s: exit %d: %s", where, l, code, strings.TrimSpace(errOut))
			}
			if name != "" {
				vars[name] = strings.TrimSpace(out)
			}
		}
	}
}
