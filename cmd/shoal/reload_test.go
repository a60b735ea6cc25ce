package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agentconfig"
	"github.com/shoal-hpc/shoal/testcluster"
)

// SIGHUP changes the probe intervals of a running agent, and the probes
// act on them: two agents ping each other once an hour (once, when they
// meet); after one is told latency_interval = "200ms" by its file and a
// SIGHUP, its RTT to the other is measured again and again, while the
// other's, not reloaded, stays at its first. Its bandwidth probe process
// gets the new test timeout in a config line of its own.
func TestAgentSIGHUPProbeIntervals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two agent processes")
	}
	t.Parallel()
	bin := testcluster.BuildShoal(t)
	dir := t.TempDir()
	token := testcluster.NewToken(t)
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 2
	ports := freePorts(t, 4*n)
	names := [n]string{"hup0", "hup1"}
	paths, logs := make([]string, n), make([]string, n)
	writeConfig := func(i int, probes string) {
		t.Helper()
		join := ""
		if i > 0 {
			join = fmt.Sprintf("join = [\"127.0.0.1:%d\"]\n", ports[0])
		}
		cfg := fmt.Sprintf(`name = %q
bind = "127.0.0.1"
gossip_port = %d
raft_port = %d
http_port = %d
probe_port = %d
data_dir = %q
token_file = %q
bootstrap_expect = %d
bandwidth_interval = "1h"
%s%s
`, names[i], ports[4*i], ports[4*i+1], ports[4*i+2], ports[4*i+3], filepath.Join(dir, names[i]), tok, n, join, probes)
		if err := os.WriteFile(paths[i], []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmds := make([]*exec.Cmd, n)
	for i := range n {
		paths[i], logs[i] = filepath.Join(dir, names[i]+".hcl"), filepath.Join(dir, names[i]+".log")
		writeConfig(i, "latency_interval = \"1h\"\n")
		cmds[i] = startAgentProcess(t, bin, paths[i], logs[i])
	}
	explain := func() string { return readLogs(logs) }
	ctx := context.Background()
	cl := api.NewTLSClient(fmt.Sprintf("https://127.0.0.1:%d", ports[2]), token, testcluster.ClientTLS(token))
	// rttAt is when each node last measured its RTT to the other, as
	// hup0 sees the network matrix.
	rttAt := func() (from0, from1 time.Time) {
		pairs, err := cl.Net(ctx)
		if err != nil {
			return
		}
		for _, p := range pairs {
			switch {
			case p.From == names[0] && p.To == names[1]:
				from0 = p.RTTAt
			case p.From == names[1] && p.To == names[0]:
				from1 = p.RTTAt
			}
		}
		return
	}
	var first0, first1 time.Time
	testcluster.WaitFor(t, 60*time.Second, "each agent's first RTT to the other", func() bool {
		first0, first1 = rttAt()
		return !first0.IsZero() && !first1.IsZero()
	}, explain)

	writeConfig(0, "latency_interval = \"200ms\"\nbandwidth_timeout = \"2s\"\n")
	if err := cmds[0].Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// At one ping an hour, hup0 would measure no second RTT within the
	// deadline; at 200ms it measures several.
	seen := map[time.Time]bool{}
	testcluster.WaitFor(t, 20*time.Second, "three new RTT measurements from hup0 after the reload", func() bool {
		if at, _ := rttAt(); at.After(first0) {
			seen[at] = true
		}
		return len(seen) >= 3
	}, func() string { return fmt.Sprintf("measured at %v after %v\n%s", seen, first0, explain()) })
	if _, at1 := rttAt(); !at1.Equal(first1) {
		t.Errorf("hup1, not reloaded, measured again at %v (first at %v): its hour has not passed", at1, first1)
	}
	testcluster.WaitFor(t, 15*time.Second, "the reload and the bandwidth probe's new timeout logged", func() bool {
		b, _ := os.ReadFile(logs[0])
		reloaded, probeTold := false, false
		for _, l := range strings.Split(string(b), "\n") {
			reloaded = reloaded || strings.Contains(l, `changed="[bandwidth_timeout 5s -> 2s latency_interval 1h0m0s -> 200ms]" needs_restart=[]`)
			probeTold = probeTold || strings.Contains(l, "probe=bandwidth") && strings.Contains(l, "probe settings changed") &&
				strings.Contains(l, "timeout_ms=2000")
		}
		return reloaded && probeTold
	}, explain)
}

// startAgentProcess runs `shoal agent --config path` with its output in
// logPath, and stops it (SIGTERM, then SIGKILL) when the test ends.
func startAgentProcess(t *testing.T, bin, path, logPath string) *exec.Cmd {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "agent", "--config", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// The admin guide's table of what SIGHUP reloads names every config key
// once, and as reloaded exactly those the agent reloads.
func TestConfigDocReloadTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/admin/config.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(string(b), "\n") {
		for _, kind := range []string{"reloaded", "restart"} {
			cells, ok := strings.CutPrefix(l, "| "+kind+" | ")
			if !ok {
				continue
			}
			keys, _, _ := strings.Cut(cells, " |")
			for _, k := range strings.Split(keys, ", ") {
				rows[kind] = append(rows[kind], strings.Trim(k, "`"))
			}
		}
	}
	wantReloaded := append([]string{"log_level"}, agent.ReloadableKeys...)
	slices.Sort(wantReloaded)
	gotReloaded := slices.Sorted(slices.Values(rows["reloaded"]))
	if !slices.Equal(gotReloaded, wantReloaded) {
		t.Errorf("docs/admin/config.md says SIGHUP reloads %q; the agent reloads %q", gotReloaded, wantReloaded)
	}
	var all []string
	for _, k := range agentconfig.Keys() {
		all = append(all, k.Name())
	}
	slices.Sort(all)
	got := slices.Sorted(slices.Values(append(rows["reloaded"], rows["restart"]...)))
	if !slices.Equal(got, all) {
		t.Errorf("docs/admin/config.md's reload table lists %q; the config keys are %q", got, all)
	}
}
