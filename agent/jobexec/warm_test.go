package jobexec

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A warm helper runs the command it is given later as a helper started
// with it would: as the owner, in the working directory, with the
// command's environment, standard input, output and error and exit
// status.
func TestWarmHelperRunsItsCommand(t *testing.T) {
	t.Parallel()
	spec := Spec{Cred: nobody(t), Dir: "/"}
	w, err := StartWarm("", spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := Command("", spec, []string{"sh", "-c", `echo "$(id -u) $(id -G) $(pwd) $A"; cat; echo oops >&2; exit 3`})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "A=1", "A=2"}
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader("from stdin\n"), &out, &errOut
	wait, err := w.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Process.Pid != w.Pid() {
		t.Errorf("the command's process is %d, want the warm helper %d", cmd.Process.Pid, w.Pid())
	}
	err = wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("wait = %v, want exit status 3", err)
	}
	if got, want := out.String(), "65534 65534 4242 / 2\nfrom stdin\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got := errOut.String(); got != "oops\n" {
		t.Errorf("stderr %q, want %q", got, "oops\n")
	}
}

// A warm helper is in the job's cgroup, and has its limits, before it has
// a command, and it is still root then: the identity changes only once the
// command has come.
func TestWarmHelperIsConfinedBeforeItsCommand(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	dirs := newCgroups1(t, "warm")
	spec := Spec{Cred: c, Dir: "/", Cgroup: dirs, Limits: []Rlimit{{"nofile", 77, 77}}}
	w, err := StartWarm("", spec)
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(w.Pid())
	for _, d := range dirs {
		waitFor(t, func() bool { return inCgroup(d, []byte(pid)) }, "the warm helper in "+d)
	}
	waitFor(t, func() bool {
		b, _ := os.ReadFile("/proc/" + pid + "/limits")
		return bytes.Contains(b, []byte("Max open files            77                   77"))
	}, "the warm helper's nofile limit set")
	if b, err := os.ReadFile("/proc/" + pid + "/status"); err != nil || !bytes.Contains(b, []byte("\nUid:\t0\t0\t0\t0\n")) {
		t.Errorf("a waiting helper's identity: %v\n%s", err, b)
	}
	cmd, err := Command("", spec, []string{"sh", "-c", `id -u; ulimit -n`})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout = &out
	wait, err := w.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "65534\n77\n" {
		t.Errorf("the job printed %q, want uid 65534 and 77 open files", got)
	}
}

// A warm helper takes only a command of its own spec: one for another
// user, directory or cgroup is refused, and nothing starts.
func TestWarmHelperRefusesAnotherSpec(t *testing.T) {
	t.Parallel()
	spec := Spec{Cred: nobody(t), Dir: "/"}
	w, err := StartWarm("", spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	for _, other := range []Spec{{Dir: "/"}, {Cred: spec.Cred, Dir: "/tmp"}, {Cred: spec.Cred, Dir: "/", Cgroup: []string{"/sys/fs/cgroup/pids"}}} {
		cmd, err := Command("", other, []string{"true"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Start(cmd); !errors.Is(err, ErrWarmSpec) {
			t.Errorf("spec %+v: Start = %v, want %v", other, err, ErrWarmSpec)
		}
		if cmd.Process != nil {
			t.Errorf("spec %+v: a process was started", other)
		}
	}
}

// A warm helper that died before its command (its cgroup was killed) says
// so, and the command starts the ordinary way.
func TestWarmHelperGoneBeforeItsCommand(t *testing.T) {
	t.Parallel()
	spec := Spec{Dir: "/"}
	w, err := StartWarm("", spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(w.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Its end of the socket closes as it dies: wait until it is a zombie.
	waitFor(t, func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(w.Pid()) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z ")
	}, "the killed warm helper to die")
	cmd, err := Command("", spec, []string{"echo", "cold"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Env, cmd.Stdout = []string{"PATH=/usr/bin:/bin"}, &out
	if _, err := w.Start(cmd); !errors.Is(err, ErrWarmGone) {
		t.Fatalf("Start on a dead warm helper = %v, want %v", err, ErrWarmGone)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || out.String() != "cold\n" {
		t.Fatalf("the ordinary start: %v, %q", err, out.String())
	}
}

// A warm helper whose command cannot start says why, as a helper started
// with it does.
func TestWarmHelperSaysWhyItCannotStart(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	base := t.TempDir() // root's, 0700
	wd := filepath.Join(base, "wd")
	if err := os.Mkdir(wd, 0o777); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Cred: c, Dir: wd}
	w, err := StartWarm("", spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := Command("", spec, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	_, err = w.Start(cmd)
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "may not enter") {
		t.Fatalf("Start = %v, want a setup error about the working directory", err)
	}
}

// A warm helper's job gets the three standard streams it was given and no
// other descriptor: neither the socket its command came on nor one the
// agent holds without close-on-exec.
func TestWarmJobInheritsNoDescriptors(t *testing.T) {
	t.Parallel()
	spec := Spec{Cred: nobody(t), Dir: "/"}
	w, err := StartWarm("", spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := Command("", spec, []string{"ls", "/proc/self/fd"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Env, cmd.Stdout = []string{"PATH=/usr/bin:/bin"}, &out
	wait, err := w.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	// ls's own descriptor of the directory it lists is the fourth.
	if fds := strings.Fields(out.String()); !slices.Equal(fds, []string{"0", "1", "2", "3"}) {
		t.Errorf("the job holds descriptors %v, want 0, 1, 2 (and ls's own 3)", fds)
	}
}

// waitFor polls cond, a state of another process that announces nothing,
// until it holds or 10 s pass.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
