package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// migNodes are the device nodes of agent.FakeMIGDevDir a job tries to
// open, in this order: the two GPUs' nodes, then each MIG instance's
// GPU instance and compute instance capability nodes.
func migNodes() []string {
	nodes := []string{"nvidia0", "nvidia1"}
	for _, m := range agent.MIGCapMinors {
		for _, minor := range m {
			nodes = append(nodes, "nvidia-caps/nvidia-cap"+strconv.FormatUint(uint64(minor), 10))
		}
	}
	return nodes
}

// migOpenScript writes, to out.JOBID, the job's CUDA_VISIBLE_DEVICES and
// what opening each of migNodes in dev gave, then stays until released so
// that jobs hold their instances at once.
func migOpenScript(dev string) string {
	return `{ echo "$CUDA_VISIBLE_DEVICES"; for d in ` + strings.Join(migNodes(), " ") + `; do echo "$d $( (: < ` + dev + `/$d) 2>&1 )"; done; } ` +
		`> "out.$SHOAL_JOB_ID.tmp"; mv "out.$SHOAL_JOB_ID.tmp" "out.$SHOAL_JOB_ID"; while [ ! -e release ]; do sleep 0.05; done`
}

// readJobOutputs waits for every job of ids to have written out.JOBID in
// dir, returns their lines by job, and releases the jobs.
func readJobOutputs(t *testing.T, dir string, ids []uint64) map[uint64][]string {
	t.Helper()
	seen := map[uint64][]string{}
	testcluster.WaitFor(t, 2*time.Minute, "the jobs to say what they could open", func() bool {
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(dir, "out."+strconv.FormatUint(id, 10)))
			if err != nil {
				return false
			}
			seen[id] = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		}
		return true
	}, func() string { return fmt.Sprint("seen so far: ", seen) })
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return seen
}

// TestMIGDeviceRulesKeepJobsOffOtherInstances: two one-GPU jobs on a node
// whose GPU 0 is in MIG mode each hold one MIG instance and may open
// their GPU's node and their own instance's two capability nodes, not
// the other instances' nor the whole GPU's node beside them. NVML is the
// fake at the boundary this machine cannot give (probe.FakeNVMLMIG); the
// device nodes and the driver's capability table are fakes too: real
// character devices made with mknod, with no driver behind them (an
// allowed open fails with ENXIO, a denied one with EPERM), and a
// mig-minors file as the driver writes it.
func TestMIGDeviceRulesKeepJobsOffOtherInstances(t *testing.T) {
	t.Parallel()
	deviceRulesOrSkip(t)
	dev := agent.FakeMIGDevDir(t, agent.FreeCharMajor(t))
	table := filepath.Join(t.TempDir(), "mig-minors")
	if err := os.WriteFile(table, []byte(agent.MIGTable), 0o644); err != nil {
		t.Fatal(err)
	}
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		cfg.Static = nvmlStatic(t, cfg.Name, probe.FakeNVMLMIG())
		cfg.Testing.GPUDevDir, cfg.Testing.MIGMinorsFile = dev, table
	})
	dir := t.TempDir()
	ids := submitOneGPUJobs(t, c, dir, migOpenScript(dev), "mig-dev-a", "mig-dev-b")
	seen := readJobOutputs(t, dir, ids)

	const reached, refused = "No such device or address", "Operation not permitted"
	// The instances the two jobs get, lowest indices first, by UUID, and
	// the nodes each may open.
	opens := map[string][]string{
		"MIG-fake0000-0000-0000-0000-000000000000": {"nvidia0", "nvidia-caps/nvidia-cap12", "nvidia-caps/nvidia-cap13"},
		"MIG-fake0000-0000-0000-0000-000000000002": {"nvidia0", "nvidia-caps/nvidia-cap84", "nvidia-caps/nvidia-cap85"},
	}
	held := map[string]bool{}
	for _, id := range ids {
		lines := seen[id]
		if len(lines) != 1+len(migNodes()) {
			t.Fatalf("job %d wrote %q, want its instance and %d opens", id, lines, len(migNodes()))
		}
		own, ok := opens[lines[0]]
		if !ok {
			t.Fatalf("job %d holds CUDA_VISIBLE_DEVICES=%q, want one of %v", id, lines[0], opens)
		}
		held[lines[0]] = true
		for i, node := range migNodes() {
			want := refused
			if slices.Contains(own, node) {
				want = reached
			}
			if got := lines[1+i]; !strings.HasPrefix(got, node+" ") || !strings.HasSuffix(got, want) {
				t.Errorf("job %d holding %s opened %s: %q, want %q", id, lines[0], node, got, want)
			}
		}
	}
	if len(held) != 2 {
		t.Errorf("the two jobs hold %v, want one instance each", held)
	}
	waitJobsDone(t, c, ids)
}

// TestMIGDeviceRulesFallBackOnAStaleTable: where the driver's capability
// table does not list an instance of the inventory (here GPU instance 9,
// as after the instances were made anew), the node binds its GPUs by
// environment only and its log says why in one line: a job then opens
// every node, never denied its own instance by a wrong map. Fakes as in
// TestMIGDeviceRulesKeepJobsOffOtherInstances.
func TestMIGDeviceRulesFallBackOnAStaleTable(t *testing.T) {
	t.Parallel()
	deviceRulesOrSkip(t)
	dev := agent.FakeMIGDevDir(t, agent.FreeCharMajor(t))
	table := filepath.Join(t.TempDir(), "mig-minors")
	if err := os.WriteFile(table, []byte(strings.ReplaceAll(agent.MIGTable, "gpu0/gi9/", "gpu0/gi8/")), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &messages{}
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		cfg.Static = nvmlStatic(t, cfg.Name, probe.FakeNVMLMIG())
		cfg.Testing.GPUDevDir, cfg.Testing.MIGMinorsFile = dev, table
		cfg.Logger = slog.New(&recordingHandler{Handler: cfg.Logger.Handler(), to: logs})
	})
	dir := t.TempDir()
	ids := submitOneGPUJobs(t, c, dir, migOpenScript(dev), "mig-stale")
	lines := readJobOutputs(t, dir, ids)[ids[0]]
	const reached = "No such device or address"
	if len(lines) != 1+len(migNodes()) {
		t.Fatalf("the job wrote %q, want its instance and %d opens", lines, len(migNodes()))
	}
	for i, node := range migNodes() {
		if got := lines[1+i]; !strings.HasSuffix(got, reached) {
			t.Errorf("the job holding %s on a node bound by environment only opened %s: %q, want %q", lines[0], node, got, reached)
		}
	}
	const want = "GPUs bound by environment variables only, not by cgroup device rules: MIG capability nodes: the driver's MIG capability table has no gpu0/gi9/access"
	if got := logs.matching("GPUs bound"); !slices.Equal(got, []string{want}) {
		t.Errorf("the agent logged %q about binding GPUs, want one line %q", got, want)
	}
	waitJobsDone(t, c, ids)
}

// messages records the messages of an agent's log.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) add(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, s)
}

// matching are the messages recorded so far that hold s.
func (m *messages) matching(s string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, msg := range m.msgs {
		if strings.Contains(msg, s) {
			out = append(out, msg)
		}
	}
	return out
}

// recordingHandler passes records on to Handler and records their
// messages.
type recordingHandler struct {
	slog.Handler
	to *messages
}

func (h *recordingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.to.add(r.Message)
	return h.Handler.Handle(ctx, r)
}

func (h *recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordingHandler{Handler: h.Handler.WithAttrs(as), to: h.to}
}

func (h *recordingHandler) WithGroup(name string) slog.Handler {
	return &recordingHandler{Handler: h.Handler.WithGroup(name), to: h.to}
}
