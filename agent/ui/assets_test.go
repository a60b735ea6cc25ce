package ui

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// Every module the pages import and every file the HTML names is embedded:
// a missing one would show only in a browser, as a page that never fills.
func TestAssets_EveryReferenceEmbedded(t *testing.T) {
	t.Parallel()
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:from\s+'\./([^']+)'|(?:src|href)="/ui/([^"#]+)")`)
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".js") && !strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range refs.FindAllStringSubmatch(string(b), -1) {
			name := m[1] + m[2]
			if name == "login" {
				continue // a route, not a file
			}
			checked++
			if _, err := fs.Stat(files, name); err != nil {
				t.Errorf("%s names %s, which is not embedded", e.Name(), name)
			}
		}
	}
	if checked < 6 {
		t.Fatalf("%d references checked: want the pages' modules and styles", checked)
	}
}
