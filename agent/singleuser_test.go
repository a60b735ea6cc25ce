package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// freePorts returns n ports free for TCP and UDP on loopback right now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			u.Close()
			ports = append(ports, p)
		}
		l.Close()
	}
	return ports
}

// TestNonRootAgentIsSingleUser runs a real agent process as uid 65534
// (nobody): every job it starts runs as nobody, beside its token file. So
// another local user (here root) may not submit through its socket, and a
// job of another owner that a token holder submits over TCP fails with the
// reason instead of running as nobody. Its own user still submits.
func TestNonRootAgentIsSingleUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to start an agent as uid 65534 (nobody)")
	}
	const uid = 65534
	base := t.TempDir()
	if err := os.Chmod(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := copyExecutable(t, base)
	shoalBin := filepath.Join(base, "shoal")
	if b, err := os.ReadFile(testcluster.BuildShoal(t)); err != nil || os.WriteFile(shoalBin, b, 0o755) != nil {
		t.Fatalf("copy shoal: %v", err)
	}
	data := filepath.Join(base, "data")
	tokFile := filepath.Join(base, "token")
	marker := filepath.Join(base, "ran") // the refused job would create it
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	tok := testcluster.NewToken(t)
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o777); err != nil { // nobody could write the marker
		t.Fatal(err)
	}
	for _, p := range []string{data, tokFile} {
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	ports := freePorts(t, 3)
	cmd := exec.Command(shoalBin, "agent", "--name", "solo", "--bind", "127.0.0.1",
		"--gossip-port", strconv.Itoa(ports[0]), "--raft-port", strconv.Itoa(ports[1]), "--http-port", strconv.Itoa(ports[2]),
		"--probe-port", "0", "--data-dir", data, "--token-file", tokFile, "--bootstrap-expect", "1")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/"}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		// Without cgroup rights it says so once, and runs jobs unconfined.
		if n := strings.Count(logs.String(), "jobs run unconfined on this node"); n != 1 {
			t.Errorf("the agent as nobody warned %d times about running jobs unconfined, want once", n)
		}
		if t.Failed() {
			t.Logf("agent log:\n%s", logs.String())
		}
	})
	ctx := context.Background()
	tcp := api.NewTLSClient("https://127.0.0.1:"+strconv.Itoa(ports[2]), tok, testcluster.ClientTLS(tok))
	testcluster.WaitFor(t, 30*time.Second, "the agent as nobody to lead", func() bool {
		_, err := tcp.Leader(ctx)
		return err == nil
	})
	sock := filepath.Join(data, "shoal.sock")

	// No cgroup rights: confined: no, with the reason, and a job with a memory limit refused.
	ns, err := tcp.Nodes(ctx)
	if err != nil || len(ns) != 1 || ns[0].Confined || ns[0].Unconfined == "" {
		t.Fatalf("nodes of an agent run as nobody: %+v %v, want one node, not confined, with the reason", ns, err)
	}
	t.Logf("unconfined: %s", ns[0].Unconfined)
	_, err = tcp.Submit(ctx, api.SubmitRequest{RequestID: "mem-on-nobody", Owner: "nobody",
		Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: "/", MemPerNode: 64 << 20}})
	if se := (*api.StatusError)(nil); !errors.As(err, &se) || se.Code != http.StatusBadRequest || !strings.Contains(se.Msg, "cgroups") {
		t.Fatalf("a --mem job on an agent without cgroups: %v, want refused with the reason", err)
	}

	// root through the socket: refused, with the reason.
	_, err = api.NewClient(api.SocketScheme+sock, "").Submit(ctx, api.SubmitRequest{RequestID: "root-on-nobody",
		Spec: api.JobSpec{Cmd: []string{"/bin/sh", "-c", "touch " + marker}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true, Force: true}})
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusForbidden || !strings.Contains(se.Msg, "not root") {
		t.Fatalf("root submitting through a non-root agent's socket: %v, want 403 saying the agent is not root", err)
	}
	// Reads stay open to every local user.
	if _, err := api.NewClient(api.SocketScheme+sock, "").Jobs(ctx); err != nil {
		t.Fatalf("root listing jobs through the socket: %v", err)
	}
	// The agent's own user may submit.
	if ans := asUser(t, bin, sock, uid, sockReq{Method: "POST", Path: "/v1/jobs", Body: submitBody("", "nobodys-own")}); ans.Code != http.StatusOK {
		t.Fatalf("nobody submitting to its own agent: %d %q", ans.Code, ans.Msg)
	}
	// A token holder's job for root lands on this node and is refused.
	res, err := tcp.Submit(ctx, api.SubmitRequest{RequestID: "roots-over-tcp", Owner: "root",
		Spec: api.JobSpec{Cmd: []string{"/bin/sh", "-c", "touch " + marker}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true, Force: true}})
	if err != nil {
		t.Fatalf("token holder submitting root's job: %v", err)
	}
	var j api.Job
	testcluster.WaitFor(t, 30*time.Second, "root's job to end", func() bool {
		j, err = tcp.Job(ctx, res.ID)
		return err == nil && (j.State == "failed" || j.State == "done")
	}, func() string { return fmt.Sprintf("job %d: %s %s %s", res.ID, j.State, j.Reason, j.WaitReason) })
	if j.State != "failed" || !strings.Contains(j.Reason, "not root") || !strings.Contains(j.Reason, "cannot run root's job") {
		t.Fatalf("root's job on a non-root agent: %s %q, want failed with the reason", j.State, j.Reason)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a job refused to root ran anyway (as nobody)")
	}
}
