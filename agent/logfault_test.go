package agent_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestFullDiskVoter: a voter whose data dir is a real filesystem that
// fills up reports unhealthy (health, nodes, metrics) within seconds,
// refuses to read a job it never received instead of saying there is no
// such job, is demoted from voter, and comes back by itself once the disk
// has room again: healthy, the job visible, a voter again.
func TestFullDiskVoter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a full filesystem is a tmpfs mount, which needs root")
	}
	t.Parallel()
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	const full = 2
	// Real boltdb: the disk that fills up is the one raft writes to.
	c := testcluster.New(t, 3, testcluster.Options{Configure: func(i int, cfg *agent.Config) {
		if i == full {
			cfg.DataDir = filepath.Join(mnt, "data")
		}
	}})
	// After the cluster's own cleanup (registered later, run earlier).
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	ctx := context.Background()
	c.WaitLeader(45 * time.Second)
	name := c.Name(full)
	role := func() string {
		ms, err := c.Client(0).Members(ctx)
		if err != nil {
			return ""
		}
		for _, m := range ms {
			if m.Name == name {
				return m.Role
			}
		}
		return ""
	}
	if err := testcluster.Poll(45*time.Second, func() bool { r := role(); return r == "voter" || r == "leader" }); err != nil {
		t.Fatalf("%s never became a voter: %s", name, c.Describe())
	}

	filler := fillDisk(t, mnt)
	filled := time.Now()
	var id uint64
	if err := testcluster.Poll(60*time.Second, func() bool {
		res, err := c.Client(0).Submit(ctx, api.SubmitRequest{RequestID: "after-the-disk-filled", Owner: "root",
			Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: os.TempDir(), MaxAttempts: 3}})
		id = res.ID
		return err == nil
	}); err != nil {
		t.Fatalf("no write committed by the two voters with room: %s", c.Describe())
	}

	if err := testcluster.Poll(30*time.Second, func() bool {
		h, err := c.Client(full).Health(ctx)
		return err == nil && h.Status == "unhealthy" && strings.Contains(h.Reason, "no space left")
	}); err != nil {
		h, err := c.Client(full).Health(ctx)
		t.Fatalf("%s with a full disk: health %+v (%v), want unhealthy, no space left", name, h, err)
	}
	t.Logf("%s unhealthy %v after its disk filled", name, time.Since(filled).Round(time.Millisecond))

	// The job committed without it: it must not answer "no such job".
	_, err := c.Client(full).Job(ctx, id)
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable || !strings.Contains(se.Msg, "stale") {
		t.Fatalf("%s with a full disk answered job %d with %v, want 503: its state may be stale", name, id, err)
	}
	if _, err := c.Client(0).Job(ctx, id); err != nil {
		t.Fatalf("a healthy voter does not know job %d: %v", id, err)
	}
	// Nor does it stream its stale state to the clients that follow it.
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	var stream []byte
	err = c.Client(full).Do(rctx, http.MethodGet, "/v1/replicate?after=0", nil, &stream)
	cancel()
	if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable || !strings.Contains(se.Msg, "no space left") {
		t.Fatalf("%s with a full disk answered a replication stream with %v, want 503: its raft log cannot be written", name, err)
	}
	health := func(i int) (string, string) {
		ns, err := c.Client(i).Nodes(ctx)
		if err != nil {
			return "", ""
		}
		for _, n := range ns {
			if n.Name == name {
				return n.Health, n.Unhealthy
			}
		}
		return "", ""
	}
	if err := testcluster.Poll(30*time.Second, func() bool { h, _ := health(0); return h == "unhealthy" }); err != nil {
		h, why := health(0)
		t.Fatalf("nodes from another agent: %s health %q (%q), want unhealthy", name, h, why)
	}
	var metrics []byte
	if err := c.Client(full).Do(ctx, http.MethodGet, "/v1/metrics", nil, &metrics); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(metrics), "\nshoal_raft_log_writable 0\n") {
		t.Fatalf("metrics of %s with a full disk lack shoal_raft_log_writable 0", name)
	}
	if err := testcluster.Poll(60*time.Second, func() bool { return role() == "nonvoter" }); err != nil {
		t.Fatalf("%s with a full disk is still %q, want demoted to nonvoter: %s", name, role(), c.Describe())
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	if err := testcluster.Poll(60*time.Second, func() bool {
		h, err := c.Client(full).Health(ctx)
		if err != nil || h.Status != "ok" {
			return false
		}
		_, err = c.Client(full).Job(ctx, id)
		return err == nil
	}); err != nil {
		h, err := c.Client(full).Health(ctx)
		t.Fatalf("%s once its disk has room: health %+v (%v), want ok and job %d readable", name, h, err, id)
	}
	t.Logf("%s healthy again %v after its disk had room", name, time.Since(freed).Round(time.Millisecond))
	if err := testcluster.Poll(60*time.Second, func() bool { r := role(); return r == "voter" || r == "leader" }); err != nil {
		t.Fatalf("%s recovered but is still %q, want a voter again", name, role())
	}
	if err := testcluster.Poll(30*time.Second, func() bool { h, _ := health(0); return h == "ok" }); err != nil {
		h, why := health(0)
		t.Fatalf("nodes from another agent after recovery: %s health %q (%q), want ok", name, h, why)
	}
}

// fillDisk writes a file into dir until its filesystem is full.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{1 << 20, 4 << 10, 512} {
		chunk := make([]byte, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", dir, err)
				}
				break
			}
		}
	}
	return path
}
