package jobrun

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// statusField is the named line of a thread's status, split.
func statusField(t *testing.T, status []byte, name string) []string {
	t.Helper()
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.Fields(v)
		}
	}
	t.Fatalf("no %s in the thread's status", name)
	return nil
}

// TestOutputWriterTakesTheOwnersFSIdentity: the thread that writes a
// job's --output file has the owner's fsuid and fsgid and no capability,
// so ext4's blocks reserved for root (its resuid, root by default, is
// compared with the writer's fsuid) and disk quotas hold as for the
// owner's own writes.
func TestOutputWriterTakesTheOwnersFSIdentity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to take another user's identity")
	}
	owner := &jobexec.Cred{User: "nobody", UID: 65534, GID: 65533}
	type seen struct {
		status []byte
		err    error
	}
	ch := make(chan seen)
	go func() {
		runtime.LockOSThread() // and never unlocked: the thread ends with the goroutine
		err := becomeOutputWriter(owner)
		b, rerr := os.ReadFile("/proc/thread-self/status")
		ch <- seen{b, errors.Join(err, rerr)}
	}()
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	// Real, effective, saved, file system.
	uid, gid := statusField(t, s.status, "Uid"), statusField(t, s.status, "Gid")
	if uid[3] != "65534" || gid[3] != "65533" {
		t.Errorf("writer thread: Uid %v, Gid %v; want fsuid 65534 and fsgid 65533", uid, gid)
	}
	if c := statusField(t, s.status, "CapEff"); c[0] != "0000000000000000" {
		t.Errorf("writer thread: CapEff %s, want none", c[0])
	}
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		t.Fatal(err)
	}
	if me := statusField(t, b, "Uid"); me[3] != "0" {
		t.Errorf("another thread changed: Uid %v", me)
	}
}
