package agent_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
)

const heldPrefix = "SOCKET-HELD "

// TestSocketHoldProcess is no test: TestLocalSocketSharePerUser runs this test binary as
// another user to open SHOAL_TEST_HOLD connections to the agent's socket, hold them (sending
// nothing, as a followed log holds its connection) and report how many the agent kept open,
// until its standard input closes.
func TestSocketHoldProcess(t *testing.T) {
	sock, n := os.Getenv("SHOAL_TEST_SOCKET"), os.Getenv("SHOAL_TEST_HOLD")
	if sock == "" || n == "" {
		return
	}
	want, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range want {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	held := 0
	for _, c := range conns {
		// A connection over the cap is closed on arrival: its read ends at once. One the
		// agent keeps waits for a request until the deadline.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		var ne net.Error
		if _, err := c.Read(make([]byte, 1)); errors.As(err, &ne) && ne.Timeout() {
			held++
		}
	}
	fmt.Printf("%s%d\n", heldPrefix, held)
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
}

// TestLocalSocketSharePerUser: a local user (uid 65534) opens every connection the socket
// allows and holds them, as `shoal logs -f` would (a followed log is exempt from the request
// timeout). The agent keeps only that user's share open, and root still gets an answer.
// With one cap for all local users, root's request was closed on arrival.
func TestLocalSocketSharePerUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to hold connections as uid 65534 (nobody)")
	}
	if _, err := user.LookupId("65534"); err != nil {
		t.Skip("no user 65534 (nobody)")
	}
	binDir := t.TempDir()
	if err := os.Chmod(filepath.Dir(binDir), 0o755); err != nil {
		t.Fatal(err)
	}
	const total, perUser = 8, 4
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		cfg.HTTP.MaxConns, cfg.HTTP.MaxConnsPerUser = total, perUser
		cfg.HTTP.HeaderTimeout = 2 * time.Minute // the held connections send nothing: keep them
	})
	bin := copyExecutable(t, binDir)
	sock := c.Agent(0).SocketPath()

	cmd := exec.Command(bin, "-test.run=^TestSocketHoldProcess$")
	cmd.Env = []string{"SHOAL_TEST_SOCKET=" + sock, "SHOAL_TEST_HOLD=" + strconv.Itoa(total), "PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	held := -1
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), heldPrefix); ok {
			held, _ = strconv.Atoi(s)
			break
		}
	}
	if held < 0 {
		t.Fatal("the holding process as uid 65534 reported nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = api.NewClient(api.SocketScheme+sock, "").Nodes(ctx)
	t.Logf("uid 65534 asked for %d connections and holds %d; root's request: %v", total, held, err)
	if err != nil {
		t.Fatalf("root's request while uid 65534 holds %d local connections (cap %d in all, %d per user): %v", held, total, perUser, err)
	}
	if held != perUser {
		t.Fatalf("uid 65534 holds %d local connections, want its share of %d", held, perUser)
	}
}
