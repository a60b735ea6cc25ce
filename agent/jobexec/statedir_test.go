package jobexec

import (
	"os"
	"path/filepath"
	"testing"
)

// A state directory that is a link is refused before anything is done
// through it: the directory it points to keeps its mode.
func TestPrepareStateDirChangesNothingThroughALink(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	link := filepath.Join(base, "supervisor")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := PrepareStateDir(link); err == nil {
		t.Error("a state directory that is a link was accepted")
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("the link's target has mode %o now, want 0755 as before", fi.Mode().Perm())
	}
}
