package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/tlsca"
)

// Each test here is an attack on another user's identity through a job's
// capability: a user who reads someone else's job output, holds a leaked
// capability, or kept one from a job whose ID came back after a restore.

// attack is what the attacker's process does, as its own uid: read a file,
// read a job's output over the socket, or exec through the API with a
// capability, over the socket or over TCP.
type attack struct {
	ReadFile string
	Socket   string // the agent's local socket; else URL over TCP
	URL      string
	CAPEM    []byte
	LogsOf   uint64 // read this job's output
	Cap      string // exec with this capability
	Exec     api.ExecRequest
}

type attackAns struct {
	Err    string
	Code   int // HTTP status of a refusal; 200 when it went through
	Output string
}

const attackAnsPrefix = "ATTACK-ANSWER "

// TestIdentityAttackerProcess is no test: the tests below run this test
// binary as another uid to make one attempt from a real process of that
// user (SHOAL_TEST_ATTACK holds it).
func TestIdentityAttackerProcess(t *testing.T) {
	raw := os.Getenv("SHOAL_TEST_ATTACK")
	if raw == "" {
		return
	}
	var a attack
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatal(err)
	}
	ans := attackAns{Code: 200}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	var err error
	switch {
	case a.ReadFile != "":
		var b []byte
		b, err = os.ReadFile(a.ReadFile)
		out.Write(b)
	default:
		var cl *api.Client
		if a.Socket != "" {
			cl = api.NewClient(api.SocketScheme+a.Socket, "")
		} else {
			cas, perr := tlsca.ParseCAs(a.CAPEM, time.Now())
			if perr != nil {
				t.Fatal(perr)
			}
			cl = api.NewTLSClient(a.URL, "", tlsca.ClientConfig(tlsca.Pool(cas...), nil, tlsca.AgentServerName))
		}
		if a.LogsOf != 0 {
			err = cl.Stream(ctx, fmt.Sprintf("/v1/jobs/%d/logs", a.LogsOf), &out)
		} else {
			_, err = cl.ExecAuth(ctx, "Job "+a.Cap, a.Exec, &out, &out)
		}
	}
	if err != nil {
		ans.Err, ans.Code = err.Error(), 0
		var se *api.StatusError
		if errors.As(err, &se) {
			ans.Code = se.Code
		}
	}
	ans.Output = out.String()
	b, _ := json.Marshal(ans)
	fmt.Printf("%s%s\n", attackAnsPrefix, b)
}

// as makes attack a from a process of uid (a copy of this test binary, bin,
// that every user may execute).
func as(t *testing.T, bin string, u *user.User, a attack) attackAns {
	t.Helper()
	uid, gid := ids(u)
	raw, _ := json.Marshal(a)
	var ans attackAns
	runAs(t, bin, "TestIdentityAttackerProcess", uint32(uid), uint32(gid), []string{"SHOAL_TEST_ATTACK=" + string(raw)}, attackAnsPrefix, &ans)
	return ans
}

// outputSoFar is a job's stdout so far, read as an administrator (not
// followed: the job goes on running).
func outputSoFar(t *testing.T, c *testcluster.Cluster, id uint64) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Client(0).Stream(context.Background(), fmt.Sprintf("/v1/jobs/%d/logs", id), &b); err != nil {
		t.Fatalf("output of job %d: %v", id, err)
	}
	return b.String()
}

// newUser makes a local user of its own for the test, removed at the end.
func newUser(t *testing.T, prefix string) *user.User {
	t.Helper()
	needNobody(t)
	for _, tool := range []string{"useradd", "userdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s to make a second unprivileged user", tool)
		}
	}
	name := fmt.Sprintf("%s%d", prefix, os.Getpid())
	if b, err := exec.Command("useradd", "--no-create-home", "--user-group", "--shell", "/bin/sh", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", name, err, b)
	}
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// capOf reads, as root, the capability a job printed of itself: the file
// its agent names in SHOAL_JOB_CAP_FILE, or SHOAL_JOB_CAP where an older
// agent put the capability itself in the environment.
var (
	capFileLine = regexp.MustCompile(`(?m)^SHOAL_JOB_CAP_FILE=(.+)$`)
	capEnvLine  = regexp.MustCompile(`(?m)^SHOAL_JOB_CAP=(\S+)$`)
)

func capOf(t *testing.T, out string) (capability, file string) {
	t.Helper()
	if m := capFileLine.FindStringSubmatch(out); m != nil {
		b, err := os.ReadFile(m[1])
		if err != nil {
			t.Fatalf("read the job's capability file as root: %v", err)
		}
		return strings.TrimSpace(string(b)), m[1]
	}
	if m := capEnvLine.FindStringSubmatch(out); m != nil {
		return m[1], ""
	}
	t.Fatalf("the job printed no capability:\n%s", out)
	return "", ""
}

// TestJobCapabilityStaysWithItsOwner is the attack of a local user on a
// job of someone else's that prints its environment (`env` in a debug
// line): the capability used to be in it, any local user could read any
// job's output through the API, and the capability alone ran commands as
// the job's owner (a file of the owner's appeared where the attacker
// chose). Now the output is the owner's, the capability is in a file only
// the owner reads, and a capability that leaks anyway is refused from any
// other user's process, over the socket and over TCP. The owner's own job
// still launches through `shoal rsh`.
func TestJobCapabilityStaysWithItsOwner(t *testing.T) {
	t.Parallel()
	nobody := needNobody(t) // the attacker
	victim := newUser(t, "shoalv")
	vuid, vgid := ids(victim)
	base := sharedDir(t)
	bin := publicCopy(t, testcluster.BuildShoal(t), base)
	self := copyExecutable(t, base)
	sock := filepath.Join(base, "shoal.sock")
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) { cfg.Bin, cfg.Socket = bin, sock })
	work := mkdirOwned(t, filepath.Join(base, "work"), 0o755, vuid, vgid)
	pwned := filepath.Join(work, "pwned")

	// The victim's job prints its environment, launches through shoal rsh
	// as an MPI launcher would, and keeps running.
	id := submitAs(t, c, victim.Username, api.JobSpec{Workdir: work, Cmd: []string{"/bin/sh", "-c",
		`env; "$0" rsh "$SHOAL_NODE" id -u > rsh.out 2>&1; echo "rsh exit $?"; exec sleep 300`, bin}})
	t.Cleanup(func() { _ = c.Client(0).Kill(context.Background(), id, "root") })
	waitState(t, c, 0, id, 30*time.Second, "running")
	var out string
	testcluster.WaitFor(t, 30*time.Second, "the job's rsh to return", func() bool {
		out = outputSoFar(t, c, id)
		return strings.Contains(out, "rsh exit ")
	})
	if b, _ := os.ReadFile(filepath.Join(work, "rsh.out")); !strings.Contains(out, "rsh exit 0") || strings.TrimSpace(string(b)) != victim.Uid {
		t.Fatalf("the owner's own shoal rsh: %q, output %q; want exit 0 and uid %s", out[strings.LastIndex(out, "rsh exit"):], b, victim.Uid)
	}
	capability, file := capOf(t, out)
	if strings.Contains(out, capability) {
		t.Errorf("the job's printed environment holds its capability %q", capability)
	}
	if file != "" {
		if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 || st.Sys().(*syscall.Stat_t).Uid != uint32(vuid) {
			t.Errorf("capability file %s: %v, %v; want mode 0600 and the owner's", file, st.Mode(), err)
		}
	}
	ca, err := os.ReadFile(filepath.Join(c.DataDir(0), agent.CAFileName))
	if err != nil {
		t.Fatal(err)
	}
	exec := api.ExecRequest{Job: id, Attempt: 1, Node: c.Name(0), Argv: []string{"touch", pwned}}

	t.Run("read the output", func(t *testing.T) {
		ans := as(t, self, nobody, attack{Socket: sock, LogsOf: id})
		if ans.Code != 403 || strings.Contains(ans.Output, "SHOAL_") {
			t.Errorf("another user read the job's output: %+v; want 403", ans)
		}
	})
	t.Run("read the capability file", func(t *testing.T) {
		if file == "" {
			t.Skip("no capability file")
		}
		if ans := as(t, self, nobody, attack{ReadFile: file}); !strings.Contains(ans.Err, "permission denied") {
			t.Errorf("another user read the capability file: %+v", ans)
		}
	})
	for name, via := range map[string]attack{
		"exec with a leaked capability over the socket": {Socket: sock},
		"exec with a leaked capability over TCP":        {URL: c.Client(0).Base, CAPEM: ca},
	} {
		t.Run(name, func(t *testing.T) {
			via.Cap, via.Exec = capability, exec
			ans := as(t, self, nobody, via)
			if ans.Code != 403 || !strings.Contains(ans.Err, "you are uid 65534") {
				t.Errorf("another user's exec with the capability: %+v; want 403 naming the caller", ans)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Fatalf("the attacker's command ran as %s: %s exists", victim.Username, pwned)
			}
		})
	}
}

// TestCapabilityOfARestoredJobID is the replay of a capability after a
// snapshot restore: a restore that set the next job ID back let a
// capability of nobody's job verify for the next job of the same ID,
// another user's, and run commands as that user. A restore now gives out
// no ID twice, so the old job's capability names an attempt the restored
// state does not hold and grants nothing, even to root's exec. That a
// capability is bound to its attempt as placed in raft (owner, placement
// index and times), which refuses it where an ID does come back (a
// cluster rebuilt from scratch), is TestCapabilityOfAReusedJobID's.
func TestCapabilityOfARestoredJobID(t *testing.T) {
	t.Parallel()
	first := needNobody(t)
	second := newUser(t, "shoalr")
	suid, sgid := ids(second)
	base := sharedDir(t)
	c := jobCluster(t, 1, nil)
	ctx := context.Background()
	snap, err := c.Client(0).SnapshotSave(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := submitAs(t, c, first.Username, api.JobSpec{Workdir: "/", Cmd: []string{"/bin/sh", "-c",
		`echo "SHOAL_JOB_CAP_FILE=$SHOAL_JOB_CAP_FILE"; echo "SHOAL_JOB_CAP=$SHOAL_JOB_CAP"; cat "$SHOAL_JOB_CAP_FILE" > /dev/null && exec sleep 300`}})
	t.Cleanup(func() { _ = c.Client(0).Kill(context.Background(), old, "root") })
	waitState(t, c, 0, old, 30*time.Second, "running")
	var out string
	testcluster.WaitFor(t, 30*time.Second, "the job to print its variables", func() bool {
		out = outputSoFar(t, c, old)
		return strings.Contains(out, "SHOAL_JOB_CAP=")
	})
	capability, _ := capOf(t, out)
	// The old job ends before the restore: a restore under a live attempt
	// of the same number is another matter (the node's bookkeeping, its
	// cgroups included, keys attempts by job and number), and here only
	// the capability is tried.
	if err := c.Client(0).Kill(ctx, old, "root"); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, 0, old, 30*time.Second, "killed")
	// Its node records the attempt's usage once its cgroup is gone, which
	// the job after the restore, of the same job and attempt number, takes.
	testcluster.WaitFor(t, 30*time.Second, "the old attempt's usage", func() bool {
		j, err := c.Client(0).Job(ctx, old)
		return err == nil && len(j.Attempts) > 0 && len(j.Attempts[0].Usage) > 0
	})
	if _, err := c.Client(0).SnapshotRestore(ctx, snap); err != nil {
		t.Fatal(err)
	}
	work := mkdirOwned(t, filepath.Join(base, "work"), 0o755, suid, sgid)
	reused := submitAs(t, c, second.Username, api.JobSpec{Workdir: work, Cmd: []string{"sleep", "300"}})
	t.Cleanup(func() { _ = c.Client(0).Kill(context.Background(), reused, "root") })
	// A restore gives out no job ID twice (raftfsm.Restored); the
	// capability's binding to the attempt as placed is the second wall,
	// tried on the job that follows either way.
	if reused < old {
		t.Fatalf("the job after the restore got ID %d, below the %d the live cluster gave out", reused, old)
	}
	waitState(t, c, 0, reused, 30*time.Second, "running")

	ca, err := tlsca.LoadCAFile(filepath.Join(c.DataDir(0), agent.CAFileName), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	jobOnly := api.NewTLSClient(c.Client(0).Base, "", tlsca.ClientConfig(tlsca.Pool(ca...), nil, tlsca.AgentServerName))
	pwned := filepath.Join(work, "pwned")
	_, err = jobOnly.ExecAuth(ctx, "Job "+capability, api.ExecRequest{Job: reused, Attempt: 1, Node: c.Name(0),
		Argv: []string{"touch", pwned}}, io.Discard, io.Discard)
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != 401 || !strings.Contains(se.Msg, "does not verify") {
		t.Errorf("job %d's old capability on the new job %d of %s: %v; want 401, does not verify", old, reused, second.Username, err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatalf("the old capability ran a command as %s (uid %s): %s exists", second.Username, strconv.Itoa(suid), pwned)
	}
}
