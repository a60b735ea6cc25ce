package apitest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Rewrite regenerates the golden key lists: go test ./pkg/ -run Keys -rewrite.
var Rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.golden key lists from the current JSON")

// Keys lists the key paths of a JSON document, sorted: "a.b" for a key b of
// the object under a, "a[]" for the elements of the array under a.
func Keys(doc []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	set := map[string]bool{}
	keys(v, "", set)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func keys(v any, path string, set map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := join(path, k)
			set[p] = true
			keys(e, p, set)
		}
	case []any:
		for _, e := range x {
			keys(e, path+"[]", set)
		}
	}
}

// snake is a JSON key of the API: lower case words and digits joined by
// single underscores ("mem_total", "1m").
var snake = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// NotSnake returns the key paths with a segment that is not snake_case.
func NotSnake(paths []string) []string {
	var bad []string
	for _, p := range paths {
		for _, seg := range strings.Split(p, ".") {
			if seg = strings.ReplaceAll(seg, "[]", ""); seg != "" && !snake.MatchString(seg) {
				bad = append(bad, p)
				break
			}
		}
	}
	return bad
}

// Golden compares got, the key lists by listing name, with the file at path
// ("listing key.path" lines), or rewrites the file with -rewrite. Every
// difference is reported: a key that left or arrived is a change of the
// user's contract.
func Golden(t testing.TB, path string, got map[string][]string) {
	t.Helper()
	var b bytes.Buffer
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, k := range got[n] {
			fmt.Fprintf(&b, "%s %s\n", n, k)
		}
	}
	if *Rewrite {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatalf("rewrite %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden key list (make it with -rewrite): %v", err)
	}
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(b.String(), "\n")
	for _, l := range wantLines {
		if l != "" && !slices.Contains(gotLines, l) {
			t.Errorf("JSON key gone: %s", l)
		}
	}
	for _, l := range gotLines {
		if l != "" && !slices.Contains(wantLines, l) {
			t.Errorf("JSON key new: %s (if intended, rerun with -rewrite)", l)
		}
	}
}
