package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
const root = ".."

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	docsPath  = regexp.MustCompile("(?:^|[\\s`(\"'])(docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-])|[`(](examples/[A-Za-z0-9_./-]*[A-Za-z0-9_-])")
	heading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	fence     = regexp.MustCompile("(?ms)^```.*?^```")
	machinePx = regexp.MustCompile(`/work/|\.\./shared/|/home/[a-z]`)
)

// markdownFiles are the pages a reader follows links through.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "SECURITY.md"}
	for _, dir := range []string{"docs", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".md") {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '→' && r != '—' && r != '–' && r != '≤' && r != '×':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
		out[slug(strings.NewReplacer("`", "", "*", "").Replace(m[1]))] = true
	}
	return out
}

// Every link in the README and the docs reaches a file, a directory or a
// heading that exists, so a page moved or renamed breaks this test, not a
// reader's click.
func TestLinksResolve(t *testing.T) {
	t.Parallel()
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(b), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s: link %q: no such file or directory", file, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[anchor] {
				t.Errorf("%s: link %q: %s has no heading with that anchor", file, target, dest)
			}
		}
	}
}

// A path the docs or the code's comments name (docs/..., and `examples/...`
// quoted or linked) is one in the tree, written from the repository's root.
func TestNamedPathsExist(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || strings.HasPrefix(d.Name(), ".demo")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go") || d.Name() == "Makefile") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, m := range docsPath.FindAllStringSubmatch(string(b), -1) {
			name := strings.TrimSuffix(m[1]+m[2], ".")
			if strings.ContainsAny(name, "*") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, name)); err != nil {
				t.Errorf("%s names %s, which does not exist", rel, name)
			}
		}
		if strings.HasSuffix(p, ".md") {
			if m := machinePx.FindString(string(b)); m != "" {
				t.Errorf("%s holds a path of one machine (%q): name the path in the repository, or the command that makes it", rel, m)
			}
		}
	}
}
