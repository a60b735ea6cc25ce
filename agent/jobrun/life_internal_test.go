package jobrun

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A head counts as restarted exactly the nodes that answered with one boot ID at launch and
// another now; a node silent at either time is left to the unreachable check.
func TestRestartedComparesBootIDs(t *testing.T) {
	t.Parallel()
	before := map[string]string{"a": "1", "b": "2", "c": "", "d": "4", "e": "5"}
	now := map[string]string{"a": "1", "b": "9", "c": "7", "d": "", "e": "6"}
	got := restarted(before, func(n string) string { return now[n] })
	if want := []string{"b", "e"}; !slices.Equal(got, want) {
		t.Fatalf("restarted = %v, want %v", got, want)
	}
}

// Each life has a boot ID of its own.
func TestNewLifeBootIDsDiffer(t *testing.T) {
	t.Parallel()
	a, b := newLife(), newLife()
	if a.boot == "" || a.boot == b.boot {
		t.Fatalf("boot IDs %q and %q: want two different non-empty IDs", a.boot, b.boot)
	}
}

// Opening an attempt's log a second time appends: what the first opener wrote stays.
func TestAttemptLogAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "stdout")
	for _, line := range []string{"first\n", "second\n"} {
		f, err := openAttemptLog(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if b, _ := os.ReadFile(path); string(b) != "first\nsecond\n" {
		t.Fatalf("log holds %q, want both lines", b)
	}
}
