package jobexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// userDir makes a directory of uid's, mode 0755, in a fresh directory
// everyone may pass through, and a root-only target file beside it that
// stands for /etc/shadow.
func userDir(t *testing.T, uid int) (dir, target string) {
	t.Helper()
	base, err := os.MkdirTemp("", "jobexec-out-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(base, "user")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(base, "etc")
	if err := os.Mkdir(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	target = filepath.Join(etc, "shadow")
	if err := os.WriteFile(target, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, target
}

func openOne(t *testing.T, spec Spec) (*os.File, error) {
	t.Helper()
	files, err := OpenFiles(context.Background(), "", spec)
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		t.Fatalf("OpenFiles gave %d files, want 1", len(files))
	}
	t.Cleanup(func() { files[0].Close() })
	return files[0], nil
}

// TestOpenFilesAsTheOwner: the helper opens an output file as its owner
// and hands the descriptor over; a file the owner may not write is refused
// with the reason, and nothing waits on a FIFO.
func TestOpenFilesAsTheOwner(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	dir, target := userDir(t, int(c.UID))
	f, err := openOne(t, Spec{Cred: c, Dir: dir, Create: []string{"-a"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hello\n"); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "-a"), &st); err != nil || st.Uid != c.UID {
		t.Errorf("the file %q is not nobody's: %v, uid %d", "-a", err, st.Uid)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "-a")); string(b) != "hello\n" {
		t.Errorf("file holds %q", b)
	}
	_, err = openOne(t, Spec{Cred: c, Dir: dir, Create: []string{target}})
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "user nobody (uid 65534) cannot write "+target+": permission denied") {
		t.Errorf("nobody opening root's file: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := openOne(t, Spec{Cred: c, Dir: dir, Create: []string{"fifo"}}); !errors.As(err, &se) {
		t.Errorf("a FIFO without a reader: %v, want a setup error", err)
	}
	if f, err := openOne(t, Spec{Cred: c, Create: []string{os.DevNull}}); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	} else if _, err := f.WriteString("x"); err != nil {
		t.Errorf("write %s: %v", os.DevNull, err)
	}
}

// TestRootOutputFollowsNoUserLink is the attack of a user on a root job's
// --output that names a path in the user's directory: a symbolic link
// there (the file itself, or a directory above it) or a hard link must not
// make root truncate and write a file of the user's choosing.
func TestRootOutputFollowsNoUserLink(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	dir, target := userDir(t, int(c.UID))
	plant := func(name string, link func(string, string) error, to string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := link(to, p); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, int(c.UID), int(c.GID)); err != nil {
			t.Fatal(err)
		}
	}
	plant("out.txt", os.Symlink, target)
	plant("logs", os.Symlink, filepath.Dir(target))
	plant("hard.txt", os.Link, target)
	for _, name := range []string{"out.txt", "logs/shadow", filepath.Join(dir, "out.txt"), "hard.txt"} {
		_, err := openOne(t, Spec{Dir: dir, Create: []string{name}})
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(se.Reason, "root does not") {
			t.Errorf("root job's output %s through nobody's link: %v, want refused", name, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "root's\n" {
		t.Fatalf("root's target now holds %q", b)
	}
	// Links root made, and links in directories only root may write, are followed.
	if err := os.Symlink(target, filepath.Join(filepath.Dir(target), "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("new.txt", filepath.Join(dir, "root-link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(filepath.Dir(target), "alias"), "root-link", "plain.txt"} {
		if _, err := openOne(t, Spec{Dir: dir, Create: []string{p}}); err != nil {
			t.Errorf("root job's output %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err != nil {
		t.Errorf("root's own link in nobody's directory was not followed: %v", err)
	}
}

// TestRootOutputWorkdirFollowsNoUserLink: a root job's working directory
// given through a user's link (--workdir /home/alice/proj, proj ->
// /etc) must not move root's output files there. The helper used to
// chdir(2), which follows the link, and resolve the files from "." after.
func TestRootOutputWorkdirFollowsNoUserLink(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	dir, target := userDir(t, int(c.UID))
	proj := filepath.Join(dir, "proj")
	if err := os.Symlink(filepath.Dir(target), proj); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(proj, int(c.UID), int(c.GID)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shadow", "new.txt"} {
		_, err := openOne(t, Spec{Dir: proj, Create: []string{name}})
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(se.Reason, "root does not follow those") {
			t.Errorf("root job's output %s in nobody's link to root's directory: %v, want refused", name, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "root's\n" {
		t.Errorf("root's target now holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(target), "new.txt")); err == nil {
		t.Error("root's output landed in root's directory through nobody's link")
	}
	// A working directory through a link of root's is followed.
	alias := filepath.Join(dir, "root-alias")
	if err := os.Symlink(filepath.Dir(target), alias); err != nil {
		t.Fatal(err)
	}
	if _, err := openOne(t, Spec{Dir: alias, Create: []string{"ok.txt"}}); err != nil {
		t.Errorf("root job's output through root's own link: %v", err)
	}
}

// TestRootOutputWritesNoUsersFile: in a directory another user may write,
// a file of that user's (one link: the user's own, or one they will
// rename away and point at) is not truncated and filled by root; a file
// of root's (its own last output) is.
func TestRootOutputWritesNoUsersFile(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	dir, _ := userDir(t, int(c.UID))
	users := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(users, []byte("nobody's\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(users, int(c.UID), int(c.GID)); err != nil {
		t.Fatal(err)
	}
	_, err := openOne(t, Spec{Dir: dir, Create: []string{"out.txt"}})
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "a file of uid 65534") {
		t.Errorf("root job's output onto nobody's file: %v, want refused", err)
	}
	if b, _ := os.ReadFile(users); string(b) != "nobody's\n" {
		t.Errorf("nobody's file now holds %q", b)
	}
	for range 2 { // created, then its own again
		f, err := openOne(t, Spec{Dir: dir, Create: []string{"root.txt"}})
		if err != nil {
			t.Fatalf("root job's own output file: %v", err)
		}
		if _, err := f.WriteString("x"); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "root.txt")); string(b) != "x" {
		t.Errorf("root's output file, opened twice, holds %q; want it truncated", b)
	}
}

// TestOpenFilesGivesUpOnAHungHelper: a helper stuck in the kernel (here
// on a FIFO that no one reads, standing for a hung NFS or FUSE path) is
// killed when the caller's context ends, and OpenFiles returns: the launch
// waiting for it used to wait for ever.
func TestOpenFilesGivesUpOnAHungHelper(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "cgroup.procs"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	files, err := OpenFiles(ctx, "", Spec{Cgroup: []string{dir}, Dir: dir, Create: []string{"out.txt"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("OpenFiles with a hung helper: %v, %v; want the context's deadline", files, err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("OpenFiles returned %v after its context ended", took)
	}
}
