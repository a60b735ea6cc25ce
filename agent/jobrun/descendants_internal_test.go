package jobrun

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/internal/procstat"
)

// A process's child is found below it through /proc, and nothing above it.
func TestDescendantsFindsAChild(t *testing.T) {
	t.Parallel()
	sh := exec.Command("sh", "-c", "sleep 60; :")
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sh.Process.Kill(); _ = sh.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := descendants([]int{sh.Process.Pid})
		if len(got) >= 2 {
			if got[0] != sh.Process.Pid {
				t.Fatalf("descendants start with %d, want the root %d", got[0], sh.Process.Pid)
			}
			for _, p := range got[1:] {
				st, err := procstat.Read(p)
				if err == nil && st.PPid != sh.Process.Pid {
					t.Errorf("pid %d listed below %d has parent %d", p, sh.Process.Pid, st.PPid)
				}
			}
			if slices.Contains(got, os.Getpid()) {
				t.Errorf("the test process, above the job, is listed below it: %v", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no child of sh found in 30 s: %v", got)
		}
		time.Sleep(10 * time.Millisecond) // polling for the child's fork, not a synchronisation by time
	}
}
