package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSocketDirSafe: the agent chmods its socket by path, so it refuses a
// directory where another user could swap the socket for a link between
// the listen and the chmod: writable by others and not sticky, a link, or
// someone else's.
func TestSocketDirSafe(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(mk("target", 0o755), link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		want string // "" for accepted
	}{
		{mk("private", 0o700), ""},
		{mk("searchable", 0o755), ""},
		{mk("sticky", 0o777|os.ModeSticky), ""},
		{mk("world-writable", 0o777), "writable by other users"},
		{mk("group-writable", 0o775), "writable by other users"},
		{link, "not a directory"},
	} {
		err := socketDirSafe(c.dir)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.dir), err, c.want)
		}
	}
	if os.Geteuid() == 0 {
		d := mk("nobodys", 0o755)
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := socketDirSafe(d); err == nil || !strings.Contains(err.Error(), "not to the agent") {
			t.Errorf("a directory of uid 65534's: %v, want refused", err)
		}
	}
}
