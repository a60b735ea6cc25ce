package jobexec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// These run the helper for real: this test binary links the package, so
// /proc/self/exe under the name Arg0 is the helper.

func nobody(t *testing.T) *Cred {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to change identity")
	}
	return &Cred{User: "nobody", UID: 65534, GID: 65534, Groups: []uint32{65534, 4242}}
}

func TestHelperBecomesTheOwner(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	cmd, err := Command("", Spec{Cred: c, Dir: "/"}, []string{"sh", "-c", `echo "$(id -u) $(id -G) $(pwd)"`})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "65534 65534 4242 /" {
		t.Fatalf("job saw %q, want uid 65534, groups 65534 4242, in /", got)
	}
}

func TestHelperSaysWhyItCannotStart(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	base, err := os.MkdirTemp("", "jobexec-") // 0700, root's, in a /tmp everyone may search
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	wd := filepath.Join(base, "wd")
	if err := os.Mkdir(wd, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		spec Spec
		argv []string
		want string
	}{
		{"workdir", Spec{Cred: c, Dir: wd}, []string{"true"},
			"working directory " + wd + ": user nobody (uid 65534) may not enter " + base + " (mode 0700, owner uid 0, group gid 0): permission denied"},
		{"missing workdir", Spec{Cred: c, Dir: "/nonexistent/wd"}, []string{"true"},
			"working directory /nonexistent/wd: user nobody (uid 65534) cannot enter it: no such file or directory"},
		{"mkdir", Spec{Cred: c, Mkdir: filepath.Join(base, "ckpt")}, nil,
			"user nobody (uid 65534) cannot create " + filepath.Join(base, "ckpt")},
		{"command", Spec{Cred: c, Dir: "/"}, []string{"no-such-program-here"}, "user nobody (uid 65534) cannot run no-such-program-here"},
		{"limit", Spec{Limits: []Rlimit{{"nofile", 10, 5}}}, []string{"true"}, "set the job's nofile limit"},
	} {
		cmd, err := Command("", tc.spec, tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		err = Start(cmd)
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(se.Reason, tc.want) {
			t.Errorf("%s: Start = %v, want a setup error with %q", tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "ckpt")); !os.IsNotExist(err) {
		t.Errorf("nobody created a directory in root's: %v", err)
	}
}

// TestJobInheritsNoDescriptors is the attack of a job on a descriptor its
// agent was started with: the agent holds a root-only file open without
// close-on-exec (as a shell's `5>file` leaves it), and a job of nobody's
// writes into it through the number it inherited. The helper must hand the
// job standard input, output and error only.
func TestJobInheritsNoDescriptors(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	secret := filepath.Join(t.TempDir(), "root-only") // in a 0700 directory of root's
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// syscall.Open, unlike os.OpenFile, leaves the descriptor inheritable.
	fd, err := syscall.Open(secret, syscall.O_WRONLY|syscall.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	cmd, err := Command("", Spec{Cred: c, Dir: "/"}, []string{"bash", "-c",
		fmt.Sprintf(`echo pwned >&%d && echo wrote; ls /proc/self/fd`, fd)})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
		t.Errorf("a job of nobody's wrote into a root-only file through descriptor %d it inherited: it now holds %q", fd, b)
	}
	if strings.Contains(out.String(), "wrote") {
		t.Errorf("the job could write to descriptor %d; stdout %q", fd, out.String())
	}
}

// TestJobEnvironmentLastWins: the agent appends its own variables after the
// job's (a SHOAL_JOB_CAP_FILE of its own after one the job's --env gave),
// and getenv(3) takes the first of a name: the job must see one entry per
// name, the last.
func TestJobEnvironmentLastWins(t *testing.T) {
	t.Parallel()
	cmd, err := Command("", Spec{Dir: "/"}, []string{"env"})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SHOAL_JOB_CAP_FILE=/home/al/fake", "A=1", "SHOAL_JOB_CAP_FILE=/tmp/caps/job7.1.40"}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "PATH=/usr/bin:/bin\nA=1\nSHOAL_JOB_CAP_FILE=/tmp/caps/job7.1.40\n"; got != want {
		t.Errorf("the job's environment:\n%s\nwant\n%s", got, want)
	}
}
