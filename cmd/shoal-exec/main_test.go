package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// fakeAgent serves /v1/exec on a unix socket as an agent does: it records
// the request and its Authorization, writes the command's output and its
// exit status as frames.
func fakeAgent(t *testing.T) (sock string, got func() (api.ExecRequest, string)) {
	t.Helper()
	sock = filepath.Join(t.TempDir(), "shoal.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var req api.ExecRequest
	var auth string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/exec" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		auth = r.Header.Get("Authorization")
		err := json.NewDecoder(r.Body).Decode(&req)
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = api.WriteFrame(w, api.FrameStdout, []byte("out\n"))
		_ = api.WriteFrame(w, api.FrameStderr, []byte("err\n"))
		_ = api.WriteFrame(w, api.FrameExit, api.ExitFrame(3))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock, func() (api.ExecRequest, string) {
		mu.Lock()
		defer mu.Unlock()
		return req, auth
	}
}

// TestRshRunsThroughTheJobsAgent: `shoal-exec rsh` is `shoal rsh`: it
// authenticates with the attempt's capability from its file, asks the
// agent of the job's socket to run the command on the host, and passes on
// the output and the exit status.
func TestRshRunsThroughTheJobsAgent(t *testing.T) {
	sock, got := fakeAgent(t)
	capFile := filepath.Join(t.TempDir(), "cap")
	if err := os.WriteFile(capFile, []byte("7.2.secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHOAL_JOB_CAP_FILE", capFile)
	t.Setenv("SHOAL_AGENT_SOCK", sock)
	t.Setenv("SHOAL_AGENT_ADDR", "")
	var out, errOut bytes.Buffer
	code := run([]string{"shoal-exec", "rsh", "-x", "-p", "22", "user@n2", "hydra_pmi_proxy", "--control-port", "h:1"}, &out, &errOut)
	if code != 3 || out.String() != "out\n" || errOut.String() != "err\n" {
		t.Fatalf("rsh exited %d with stdout %q, stderr %q; want 3, \"out\\n\", \"err\\n\"", code, out.String(), errOut.String())
	}
	req, auth := got()
	want := api.ExecRequest{Job: 7, Attempt: 2, Node: "n2", Shell: "hydra_pmi_proxy --control-port h:1"}
	if req.Job != want.Job || req.Attempt != want.Attempt || req.Node != want.Node || req.Shell != want.Shell || len(req.Argv) != 0 {
		t.Errorf("the agent was asked %+v, want %+v", req, want)
	}
	if auth != "Job 7.2.secret" {
		t.Errorf("Authorization %q, want the job capability", auth)
	}
}

func TestRshRefusesOutsideAJobAndBadArguments(t *testing.T) {
	t.Setenv("SHOAL_JOB_CAP_FILE", "")
	t.Setenv("SHOAL_JOB_CAP", "")
	t.Setenv("SHOAL_AGENT_SOCK", "")
	t.Setenv("SHOAL_AGENT_ADDR", "")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"shoal-exec", "rsh", "n2", "true"}, 2, "runs only inside a shoal job"},
		{[]string{"shoal-exec", "rsh", "n2"}, 2, "no command for n2"},
		{[]string{"shoal-exec", "rsh", "-p"}, 2, "option -p needs an argument"},
		{[]string{"shoal-exec"}, 2, "usage: shoal-exec rsh"},
		{[]string{"shoal-exec", "agent"}, 2, "usage: shoal-exec rsh"},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.msg) || out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want %d and %q", tc.args[1:], code, errOut.String(), out.String(), tc.code, tc.msg)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"shoal-exec", "--help"}, &out, &out); code != 0 || !strings.Contains(out.String(), "Example") {
		t.Errorf("--help: exit %d, %q", code, out.String())
	}
}

// build builds this command into a fresh directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shoal-exec")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinaryIsTheJobHelper: started under the helper's name, the binary
// is the job helper, which takes the owner's identity before it runs the
// job (without the helper linked, it would print its usage instead, and
// the job would never run).
func TestBinaryIsTheJobHelper(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to change identity")
	}
	bin := build(t)
	c := &jobexec.Cred{User: "nobody", UID: 65534, GID: 65534, Groups: []uint32{65534}}
	cmd, err := jobexec.Command(bin, jobexec.Spec{Cred: c, Dir: "/"}, []string{"sh", "-c", `echo "$(id -u) $(id -G) $(pwd)"`})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := jobexec.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got := strings.TrimSpace(out.String()); got != "65534 65534 /" {
		t.Fatalf("job saw %q, want uid 65534, groups 65534, in /", got)
	}
}

// TestLinksOnlyWhatStartsJobs: the binary is started once per job process
// and per remote host of an MPI launch; its worth is that it links little
// beyond the standard library. A dependency that brings the agent, the
// CLI or their libraries in fails here.
func TestLinksOnlyWhatStartsJobs(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/shoal-hpc/shoal/cmd/shoal-exec":    true,
		"github.com/shoal-hpc/shoal/agent/jobexec":     true,
		"github.com/shoal-hpc/shoal/agent/api":         true,
		"github.com/shoal-hpc/shoal/internal/injob":    true,
		"github.com/shoal-hpc/shoal/internal/spawn":    true,
		"github.com/shoal-hpc/shoal/internal/swapfile": true,
		"github.com/shoal-hpc/shoal/internal/procstat": true,
		"github.com/shoal-hpc/shoal/internal/termsafe": true,
		"github.com/shoal-hpc/shoal/tlsca":             true,
		"golang.org/x/sys/unix":                        true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("shoal-exec links %s", p)
		}
	}
}
