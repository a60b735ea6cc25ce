package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// sockReq and sockAns travel between TestLocalSocket and the helper
// process it starts as another user.
type sockReq struct {
	Method, Path string
	Body         json.RawMessage
	// UntilKey makes a GET of /v1/events read the stream until an event
	// of that key, and answer the events read as Body.
	UntilKey string
}

type sockAns struct {
	Code int
	Msg  string
	Body json.RawMessage
}

const sockAnsPrefix = "SOCKET-ANSWER "

// TestSocketClientProcess is no test: TestLocalSocket runs this test binary
// under another uid to send one request over the agent's socket from a real
// process of that user.
func TestSocketClientProcess(t *testing.T) {
	sock := os.Getenv("SHOAL_TEST_SOCKET")
	if sock == "" {
		return
	}
	var req sockReq
	if err := json.Unmarshal([]byte(os.Getenv("SHOAL_TEST_REQUEST")), &req); err != nil {
		t.Fatal(err)
	}
	var in any
	if req.Body != nil {
		in = []byte(req.Body)
	}
	var out json.RawMessage
	ans := sockAns{Code: http.StatusOK}
	var err error
	if req.UntilKey != "" {
		out, err = readEventsUntil(api.NewClient(api.SocketScheme+sock, ""), req.Path, req.UntilKey)
	} else {
		err = api.NewClient(api.SocketScheme+sock, "").Do(context.Background(), req.Method, req.Path, in, &out)
	}
	var se *api.StatusError
	switch {
	case errors.Is(err, api.ErrUnauthorized):
		ans.Code = http.StatusUnauthorized
	case errors.As(err, &se):
		ans.Code, ans.Msg = se.Code, se.Msg
	case err != nil:
		t.Fatal(err)
	}
	ans.Body = out
	b, _ := json.Marshal(ans)
	fmt.Printf("%s%s\n", sockAnsPrefix, b)
}

// readEventsUntil reads the stream of path (GET /v1/events?index=N) until
// an event of key, and returns the events read.
func readEventsUntil(c *api.Client, path, key string) (json.RawMessage, error) {
	u, err := url.Parse(path)
	if err != nil {
		return nil, err
	}
	after, err := strconv.ParseUint(u.Query().Get("index"), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("the test's event path needs ?index=N: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var evs []api.Event
	errFound := errors.New("found")
	err = c.Events(ctx, api.EventsQuery{Topics: []string{u.Query().Get("topic")}, After: after, Resume: true}, func(e api.Event) error {
		evs = append(evs, e)
		if e.Key == key {
			return errFound
		}
		return nil
	})
	if !errors.Is(err, errFound) {
		return nil, err
	}
	return json.Marshal(evs)
}

// asUser sends req over sock from a process running as uid (a copy of this
// test binary that other users may execute).
func asUser(t *testing.T, bin, sock string, uid uint32, req sockReq) sockAns {
	t.Helper()
	rb, _ := json.Marshal(req)
	var ans sockAns
	runAs(t, bin, "TestSocketClientProcess", uid, uid, []string{"SHOAL_TEST_SOCKET=" + sock, "SHOAL_TEST_REQUEST=" + string(rb)}, sockAnsPrefix, &ans)
	return ans
}

// runAs runs test, of this test binary's copy bin, as uid and gid with env
// (and a PATH), and decodes into ans the JSON of its stdout's line that
// starts with prefix.
func runAs(t *testing.T, bin, test string, uid, gid uint32, env []string, prefix string, ans any) {
	t.Helper()
	var out []byte
	var err error
	// A fork elsewhere in this process can hold the copy's write descriptor
	// open for an instant after it was written (golang/go#22315): exec then
	// fails with ETXTBSY until that child execs. Try again a few times.
	for try := 0; ; try++ {
		cmd := exec.Command(bin, "-test.run=^"+test+"$")
		cmd.Env = append(slices.Clone(env), "PATH=/usr/bin:/bin")
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		out, err = cmd.CombinedOutput()
		if !errors.Is(err, syscall.ETXTBSY) || try == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond) // backoff before the next exec, not a synchronisation
	}
	if err != nil {
		t.Fatalf("%s as uid %d: %v\n%s", test, uid, err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			if err := json.Unmarshal([]byte(line), ans); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s as uid %d gave no answer:\n%s", test, uid, out)
}

// copyExecutable copies this test binary where every user may run it (the
// go tool builds it in a directory only its user may enter).
func copyExecutable(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// A file of its own per caller: parallel subtests would otherwise
	// rewrite a binary another one is executing ("text file busy").
	dst, err := os.CreateTemp(dir, "agent.test-*")
	if err != nil {
		t.Fatal(err)
	}
	path := dst.Name()
	if err := dst.Chmod(0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func submitBody(owner, marker string) json.RawMessage {
	b, _ := json.Marshal(api.SubmitRequest{RequestID: marker, Owner: owner, Spec: api.JobSpec{
		Cmd: []string{"true", marker}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true}})
	return b
}

// jobWith finds the job whose command carries marker.
func jobWith(t *testing.T, c *testcluster.Cluster, marker string) (api.Job, bool) {
	t.Helper()
	js, err := c.Client(0).Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		if len(j.Spec.Cmd) == 2 && j.Spec.Cmd[1] == marker {
			return j, true
		}
	}
	return api.Job{}, false
}

func TestLocalSocket(t *testing.T) {
	t.Parallel()
	// Let other users reach the socket in the cluster's data directory
	// and the helper binary: the test's directories are 0700 otherwise.
	binDir := t.TempDir()
	if err := os.Chmod(filepath.Dir(binDir), 0o755); err != nil {
		t.Fatal(err)
	}
	c := jobCluster(t, 1, nil)
	sock := c.Agent(0).SocketPath()
	if sock != filepath.Join(c.DataDir(0), "shoal.sock") {
		t.Fatalf("socket at %q, want the default in the data dir %s", sock, c.DataDir(0))
	}
	if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o666 {
		t.Fatalf("socket mode: %v %v, want 0666", st.Mode(), err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	local := api.NewClient(api.SocketScheme+sock, "")
	ctx := context.Background()
	isRoot := os.Geteuid() == 0
	nobody, nobodyErr := user.LookupId("65534")

	t.Run("as yourself without a token", func(t *testing.T) {
		t.Parallel()
		res, err := local.Submit(ctx, api.SubmitRequest{RequestID: "self-api", Spec: api.JobSpec{
			Cmd: []string{"true", "self-api"}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true}})
		if err != nil {
			t.Fatalf("submit with no owner over the socket: %v", err)
		}
		if j, err := local.Job(ctx, res.ID); err != nil || j.Owner != me.Username {
			t.Fatalf("job %d owner %q (%v), want %q", res.ID, j.Owner, err, me.Username)
		}
		// The CLI, with no token anywhere, runs a job and streams its output.
		cmd := exec.Command(testcluster.BuildShoal(t), "run", "--addr", api.SocketScheme+sock, "-n", "1", "--mpi", "none", "--", "echo", "hello over the socket")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "SHOAL_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "hello over the socket") {
			t.Fatalf("shoal run over the socket: %v\n%s", err, out)
		}
	})

	t.Run("another user may not impersonate", func(t *testing.T) {
		t.Parallel()
		if !isRoot || nobodyErr != nil {
			t.Skip("needs root to run a client as uid 65534 (nobody)")
		}
		bin := copyExecutable(t, binDir)
		ans := asUser(t, bin, sock, 65534, sockReq{Method: "POST", Path: "/v1/jobs", Body: submitBody("root", "impostor")})
		want := fmt.Sprintf("you are %s (uid 65534); only root may act as root", nobody.Username)
		if ans.Code != http.StatusForbidden || ans.Msg != want {
			t.Fatalf("submit as root from nobody: %d %q, want 403 %q", ans.Code, ans.Msg, want)
		}
		if j, ok := jobWith(t, c, "impostor"); ok {
			t.Fatalf("refused submit made job %d", j.ID)
		}
		// A job of root's, which nobody may not kill in root's name.
		res, err := local.Submit(ctx, api.SubmitRequest{RequestID: "roots", Owner: "root", Spec: api.JobSpec{
			Cmd: []string{"sleep", "30"}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Client(0).Kill(ctx, res.ID, "root") })
		ans = asUser(t, bin, sock, 65534, sockReq{Method: "POST", Path: fmt.Sprintf("/v1/jobs/%d/kill", res.ID), Body: json.RawMessage(`{"user":"root"}`)})
		if ans.Code != http.StatusForbidden || !strings.Contains(ans.Msg, "only root may act as root") {
			t.Fatalf("kill as root from nobody: %d %q, want 403", ans.Code, ans.Msg)
		}
		if j, err := local.Job(ctx, res.ID); err != nil || j.State == "killed" {
			t.Fatalf("refused kill: job %d is %q (%v)", res.ID, j.State, err)
		}
		// Raw raft commands name whom they like: not for ordinary users.
		cmd, _ := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Now(), raftfsm.SubmitJob{RequestID: "raw", Owner: "root",
			Spec: raftfsm.JobSpec{Cmd: []string{"true", "raw-impostor"}, NP: 1, MPI: "none"}})
		ans = asUser(t, bin, sock, 65534, sockReq{Method: "POST", Path: "/v1/apply", Body: cmd})
		if ans.Code != http.StatusForbidden {
			t.Fatalf("raw apply from nobody: %d %q, want 403", ans.Code, ans.Msg)
		}
		if j, ok := jobWith(t, c, "raw-impostor"); ok {
			t.Fatalf("refused raw apply made job %d", j.ID)
		}
		// Reads are open, and nobody may act as nobody.
		if ans = asUser(t, bin, sock, 65534, sockReq{Method: "GET", Path: "/v1/nodes"}); ans.Code != http.StatusOK {
			t.Fatalf("nodes from nobody: %d %q", ans.Code, ans.Msg)
		}
		ans = asUser(t, bin, sock, 65534, sockReq{Method: "POST", Path: "/v1/jobs", Body: submitBody("", "nobodys")})
		if ans.Code != http.StatusOK {
			t.Fatalf("submit as themselves from nobody: %d %q", ans.Code, ans.Msg)
		}
		if j, ok := jobWith(t, c, "nobodys"); !ok || j.Owner != nobody.Username {
			t.Fatalf("nobody's own job: %+v (found %v), want owner %q", j, ok, nobody.Username)
		}
	})

	t.Run("root may act as anyone", func(t *testing.T) {
		t.Parallel()
		if !isRoot || nobodyErr != nil {
			t.Skip("needs root and a user 65534 (nobody)")
		}
		res, err := local.Submit(ctx, api.SubmitRequest{RequestID: "for-nobody", Owner: nobody.Username, Spec: api.JobSpec{
			Cmd: []string{"sleep", "30"}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true}})
		if err != nil {
			t.Fatalf("root submitting as %s: %v", nobody.Username, err)
		}
		if j, err := local.Job(ctx, res.ID); err != nil || j.Owner != nobody.Username {
			t.Fatalf("job %d owner %q (%v), want %q", res.ID, j.Owner, err, nobody.Username)
		}
		if err := local.Kill(ctx, res.ID, nobody.Username); err != nil {
			t.Fatalf("root killing as %s: %v", nobody.Username, err)
		}
	})

	t.Run("others' environment is hidden", func(t *testing.T) {
		t.Parallel()
		if !isRoot || nobodyErr != nil {
			t.Skip("needs root to run a client as uid 65534 (nobody)")
		}
		before, err := local.WaitJobs(ctx, 0, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		res, err := local.Submit(ctx, api.SubmitRequest{RequestID: "secret-env", Owner: "root", Spec: api.JobSpec{
			Cmd: []string{"true", "secret-env"}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true, Env: []string{"API_KEY=s3cret"}}})
		if err != nil {
			t.Fatal(err)
		}
		bin := copyExecutable(t, binDir)
		// The event stream shows the job as the reads do.
		ans := asUser(t, bin, sock, 65534, sockReq{Method: "GET", Path: fmt.Sprintf("/v1/events?topic=job&index=%d", before), UntilKey: strconv.FormatUint(res.ID, 10)})
		if ans.Code != http.StatusOK || strings.Contains(string(ans.Body), "s3cret") || !strings.Contains(string(ans.Body), "API_KEY=(hidden)") {
			t.Fatalf("GET /v1/events as nobody: %d %s", ans.Code, ans.Body)
		}
		for _, path := range []string{fmt.Sprintf("/v1/jobs/%d", res.ID), "/v1/jobs"} {
			ans := asUser(t, bin, sock, 65534, sockReq{Method: "GET", Path: path})
			if ans.Code != http.StatusOK || strings.Contains(string(ans.Body), "s3cret") || !strings.Contains(string(ans.Body), "API_KEY=(hidden)") {
				t.Fatalf("GET %s from nobody: %d %s, want the variable's name without its value", path, ans.Code, ans.Body)
			}
		}
		if ans := asUser(t, bin, sock, 65534, sockReq{Method: "GET", Path: "/v1/state"}); ans.Code != http.StatusForbidden {
			t.Fatalf("GET /v1/state from nobody: %d, want 403", ans.Code)
		}
		if j, err := local.Job(ctx, res.ID); err != nil || len(j.Spec.Env) != 1 || j.Spec.Env[0] != "API_KEY=s3cret" {
			t.Fatalf("the owner sees env %v (%v), want [API_KEY=s3cret]", j.Spec.Env, err)
		}
	})

	t.Run("TCP still needs the token", func(t *testing.T) {
		t.Parallel()
		_, err := api.NewTLSClient(c.Client(0).Base, "", testcluster.ClientTLS(c.Token())).Submit(ctx, api.SubmitRequest{RequestID: "tcp", Owner: me.Username,
			Spec: api.JobSpec{Cmd: []string{"true", "tcp-no-token"}, NP: 1, MPI: "none"}})
		if !errors.Is(err, api.ErrUnauthorized) {
			t.Fatalf("submit over TCP without a token: %v, want 401", err)
		}
		if j, ok := jobWith(t, c, "tcp-no-token"); ok {
			t.Fatalf("refused submit made job %d", j.ID)
		}
	})
}

// TestSocketFile covers what may lie at the socket's path when an agent
// starts, and paths too long for a socket.
func TestSocketFile(t *testing.T) {
	t.Parallel()
	newAgent := func(t *testing.T, dataDir, socket string) (*agent.Agent, error) {
		cfg := agent.DefaultConfig()
		cfg.Name, cfg.DataDir, cfg.Socket, cfg.Token = "s", dataDir, socket, testcluster.NewToken(t)
		cfg.BindAddr, cfg.GossipPort, cfg.RaftPort, cfg.HTTPPort = "127.0.0.1", 0, 0, 0
		cfg.Logger = slog.New(slog.DiscardHandler)
		a, err := agent.New(cfg)
		if err == nil {
			t.Cleanup(func() { a.Shutdown(agent.Abrupt) })
		}
		return a, err
	}
	t.Run("stale socket removed", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "s.sock")
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false) // as a crashed agent leaves it
		ln.Close()
		a, err := newAgent(t, t.TempDir(), path)
		if err != nil || a.SocketPath() != path {
			t.Fatalf("over a stale socket: %v", err)
		}
		a.Shutdown(agent.Abrupt)
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("socket left after shutdown: %v", err)
		}
	})
	t.Run("live socket refused", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "s.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if _, err := newAgent(t, t.TempDir(), path); err == nil || !strings.Contains(err.Error(), "another process listens") {
			t.Fatalf("over a live socket: %v", err)
		}
	})
	t.Run("regular file refused", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "s.sock")
		if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := newAgent(t, t.TempDir(), path); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Fatalf("over a regular file: %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "keep me" {
			t.Fatal("the file was touched")
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		a, err := newAgent(t, t.TempDir(), agent.SocketOff)
		if err != nil {
			t.Fatal(err)
		}
		if a.SocketPath() != "" {
			t.Fatalf("socket off, yet one at %s", a.SocketPath())
		}
	})
	t.Run("too long", func(t *testing.T) {
		t.Parallel()
		deep := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
		a, err := newAgent(t, deep, "")
		if err != nil {
			t.Fatalf("default socket path too long: %v, want the agent without a socket", err)
		}
		if a.SocketPath() != "" {
			t.Fatalf("default socket path too long, yet one at %s", a.SocketPath())
		}
		if _, err := newAgent(t, t.TempDir(), filepath.Join(deep, "s.sock")); err == nil {
			t.Fatal("an explicit socket path too long was accepted")
		}
	})
}
