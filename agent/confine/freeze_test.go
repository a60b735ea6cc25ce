package confine

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// Freezer's file stops a job where it stands (it prints no more), and Kill
// still ends a frozen job: the agent kills what the fence guard froze.
func TestFreezerStopsAJobThatKillStillEnds(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		cg := newCgroup(t, m, "frozen", Limits{})
		j := startJob(t, cg, `echo ready; while :; do sleep 0.01; done`)
		if got := j.line(t); got != "ready" {
			t.Fatalf("job printed %q", got)
		}
		file, freeze, _ := cg.Freezer()
		if err := os.WriteFile(file, []byte(freeze), 0); err != nil {
			t.Fatal(err)
		}
		f := cg.g.freezer()
		if !poll(10*time.Second, func() bool { b, _ := os.ReadFile(f.state); return strings.Contains(string(b), f.frozen) }) {
			t.Fatalf("cgroup not frozen after writing %q to %s", freeze, file)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cg.Kill(ctx); err != nil {
			t.Fatal(err)
		}
		if err := j.wait(t, 30*time.Second); err == nil {
			t.Fatal("the frozen job exited 0, want killed")
		}
	})
}
