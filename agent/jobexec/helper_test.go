package jobexec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
