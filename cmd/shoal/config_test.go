package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agentconfig"
	"github.com/shoal-hpc/shoal/testcluster"
)

// Every flag of `shoal agent` is a config file key, and every key a flag.
func TestEveryAgentFlagIsAKey(t *testing.T) {
	flags := map[string]bool{}
	for _, f := range agentCommand().Flags {
		name := f.Names()[0]
		if name == "config" || name == "validate" {
			continue
		}
		flags[name] = true
		k, ok := agentconfig.Lookup(name)
		if !ok {
			t.Errorf("flag --%s has no config file key", name)
			continue
		}
		kindOK := false
		switch f.(type) {
		case *cli.StringFlag:
			kindOK = k.Kind == agentconfig.String || k.Kind == agentconfig.Size
		case *cli.IntFlag:
			kindOK = k.Kind == agentconfig.Int
		case *cli.BoolFlag:
			kindOK = k.Kind == agentconfig.Bool
		case *cli.DurationFlag:
			kindOK = k.Kind == agentconfig.Duration
		case *cli.StringSliceFlag:
			kindOK = k.Kind == agentconfig.List
		}
		if !kindOK {
			t.Errorf("flag --%s is a %T but key %s takes %v", name, f, k.Name(), k.Kind)
		}
	}
	for _, k := range agentconfig.Keys() {
		if !flags[k.Flag] {
			t.Errorf("key %s has no flag --%s", k.Name(), k.Flag)
		}
	}
}

func TestAgentValidate(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte(testcluster.NewToken(t)+"\n"), 0o600)
	// A token a person chose, which the public CA certificate lets anyone
	// guess offline.
	weak := filepath.Join(dir, "weak-token")
	os.WriteFile(weak, []byte("physics-lab-cluster-2024\n"), 0o600)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.hcl", fmt.Sprintf("data_dir = %q\ntoken_file = %q\njoin = [\"node1\"]\n", dir, tok))
	badKey := write("badkey.hcl", fmt.Sprintf("data_dir = %q\ntoken_file = %q\nbootstrap = 3\n", dir, tok))
	badTok := write("badtok.hcl", fmt.Sprintf("data_dir = %q\ntoken_file = %q\n", dir, filepath.Join(dir, "none")))
	cases := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"good", []string{"agent", "--config", good, "--validate"}, exitOK, good + ": valid"},
		{"unknown key", []string{"agent", "--config", badKey, "--validate"}, exitUsage, badKey + ":3: bootstrap: unknown key; did you mean bootstrap_expect?"},
		{"missing token", []string{"agent", "--config", badTok, "--validate"}, exitUsage, badTok + ":2: token_file: "},
		{"flag breaks a good file", []string{"agent", "--config", good, "--validate", "--bind", "x"}, exitUsage, `--bind: "x" is not an IP address`},
		{"flag mends a bad file", []string{"agent", "--config", badTok, "--token-file", tok, "--validate"}, exitOK, badTok + ": valid"},
		{"weak token", []string{"agent", "--config", good, "--token-file", weak, "--validate"}, exitUsage,
			"--token-file: the cluster token is weak: "},
		{"no such file", []string{"agent", "--config", filepath.Join(dir, "nope.hcl"), "--validate"}, exitUsage, "read config file: "},
		{"fewer servers than voters", []string{"agent", "--config", good, "--validate", "--voters", "5", "--servers", "3"}, exitUsage,
			"servers 3 must be at least the voter target 5"},
		{"servers below bootstrap-expect", []string{"agent", "--config", good, "--validate", "--servers", "2"}, exitUsage,
			"servers 2 must be at least the voter target 3"},
		{"five voters fit the default five servers", []string{"agent", "--config", good, "--validate", "--voters", "5"}, exitOK, good + ": valid"},
		{"too many latency peers", []string{"agent", "--config", good, "--validate", "--latency-peers", "5000"}, exitUsage,
			"--latency-peers: latency peers 5000 is outside 0-4096: pass at most 4096, or 0 for the default 16"},
		{"network-model knobs in bounds", []string{"agent", "--config", good, "--validate", "--latency-peers", "4", "--topo-small-cluster", "-1",
			"--topo-cross-per-node", "3", "--netrow-refresh", "10m", "--netrow-min-interval", "5s", "--netrow-send-timeout", "2s"}, exitOK, good + ": valid"},
		{"row refresh under its min interval", []string{"agent", "--config", good, "--validate", "--netrow-refresh", "500ms"}, exitUsage,
			"--netrow-refresh: network row min interval 1s exceeds the refresh 500ms: raise --netrow-refresh or lower --netrow-min-interval"},
	}
	for _, tc := range cases {
		out, errOut, code := shoal(t, nil, tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.name, code, tc.code, errOut)
		}
		got := strings.TrimSpace(out + errOut)
		if !strings.Contains(got, tc.out) {
			t.Errorf("%s: output %q, want %q", tc.name, got, tc.out)
		}
		if tc.code != exitOK {
			oneLine(t, tc.name, errOut)
		}
	}
	// The SHOAL_* variable of a new knob is read like a flag's.
	_, errOut, code := shoal(t, map[string]string{"SHOAL_TOPO_OWN_OFFSETS": "0"}, "agent", "--config", good, "--validate")
	if want := "--topo-own-offsets: probe topology: OwnOffsets = 0, want 1..8"; code != exitUsage || !strings.Contains(errOut, want) {
		t.Errorf("SHOAL_TOPO_OWN_OFFSETS=0: exit %d, %q, want %d and %q", code, errOut, exitUsage, want)
	}
	oneLine(t, "SHOAL_TOPO_OWN_OFFSETS=0", errOut)
}

// freePorts returns n distinct ports free for TCP and UDP on loopback.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var hold []net.Listener
	defer func() {
		for _, l := range hold {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			l.Close()
			continue
		}
		u.Close()
		hold = append(hold, l)
		ports = append(ports, p)
	}
	return ports
}

// Three agents started from config files alone (no flag but --config) form
// a cluster; the file's log level reaches the agent; a flag overrides the
// file's port.
func TestAgentsFromConfigFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three agent processes")
	}
	bin := testcluster.BuildShoal(t)
	dir := t.TempDir()
	token := testcluster.NewToken(t)
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 3
	ports := freePorts(t, 4*n+1)
	gossip := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[4*i]) }
	logs := make([]string, n)
	httpPort := make([]int, n)
	for i := range n {
		name := fmt.Sprintf("cf%d", i)
		join := ""
		if i > 0 {
			join = fmt.Sprintf("join = [%q]\n", gossip(0))
		}
		level := "info"
		if i == 1 {
			level = "debug"
		}
		cfg := fmt.Sprintf(`name = %q
bind = "127.0.0.1"
gossip_port = %d
raft_port = %d
http_port = %d
probe_port = %d
data_dir = %q
token_file = %q
bootstrap_expect = 3
log_level = %q
latency_interval = "1h"
bandwidth_interval = "1h"
%s`, name, ports[4*i], ports[4*i+1], ports[4*i+2], ports[4*i+3], filepath.Join(dir, name), tok, level, join)
		path := filepath.Join(dir, name+".hcl")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"agent", "--config", path}
		httpPort[i] = ports[4*i+2]
		if i == 2 { // the flag wins over the file's http_port
			httpPort[i] = ports[4*n]
			args = append(args, "--http-port", fmt.Sprint(httpPort[i]))
		}
		logs[i] = filepath.Join(dir, name+".log")
		logf, err := os.Create(logs[i])
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		logf.Close()
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
	}
	explain := func() string { return readLogs(logs) }
	ctx := context.Background()
	// One client per agent for the whole test: a client per poll would
	// leave connections open and soon meet the agent's per-source cap.
	clients := make([]*api.Client, n)
	for i := range n {
		clients[i] = api.NewTLSClient(fmt.Sprintf("https://127.0.0.1:%d", httpPort[i]), token, testcluster.ClientTLS(token))
	}
	client := func(i int) *api.Client { return clients[i] }
	testcluster.WaitFor(t, 60*time.Second, "three agents from config files agree on a leader", func() bool {
		leader := ""
		for i := range n {
			ns, err := client(i).Nodes(ctx)
			if err != nil || len(ns) != n {
				return false
			}
			l, err := client(i).Leader(ctx)
			if err != nil || l.Name == "" || (leader != "" && l.Name != leader) {
				return false
			}
			leader = l.Name
		}
		return true
	}, explain)
	for i := range n {
		out, _ := os.ReadFile(logs[i])
		if debug := strings.Contains(string(out), "level=DEBUG"); debug != (i == 1) {
			t.Errorf("agent %d: debug lines %v, want %v (log_level in its file)", i, debug, i == 1)
		}
	}
}

// SIGHUP re-reads the config file: the new log level takes effect at once,
// the new job retention purges a finished job (reload_test.go sees the
// probe intervals change), other changes are logged as needing a restart, and a bad file changes
// nothing and keeps the agent running.
func TestAgentSIGHUPReload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent process")
	}
	bin := testcluster.BuildShoal(t)
	dir := t.TempDir()
	token := testcluster.NewToken(t)
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 4)
	path := filepath.Join(dir, "shoal.hcl")
	writeConfig := func(extra string) {
		t.Helper()
		cfg := fmt.Sprintf(`name = "hup"
bind = "127.0.0.1"
gossip_port = %d
raft_port = %d
http_port = %d
probe_port = %d
data_dir = %q
token_file = %q
bootstrap_expect = 1
%s
`, ports[0], ports[1], ports[2], ports[3], filepath.Join(dir, "data"), tok, extra)
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	probes := "latency_interval = \"1h\"\nbandwidth_interval = \"1h\"\n"
	writeConfig(probes + `log_level = "info"`)
	logPath := filepath.Join(dir, "agent.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "agent", "--config", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
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
	agentLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	explain := func() string { return "agent log:\n" + agentLog() }
	cl := api.NewTLSClient(fmt.Sprintf("https://127.0.0.1:%d", ports[2]), token, testcluster.ClientTLS(token))
	ctx := context.Background()
	testcluster.WaitFor(t, 45*time.Second, "the agent's API", func() bool { _, err := cl.Leader(ctx); return err == nil }, explain)
	// A plain-TCP stranger makes a TLS handshake error, which the agent
	// logs at debug level only.
	poke := func() {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[2])); err == nil {
			conn.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
			io.Copy(io.Discard, conn)
			conn.Close()
		}
	}
	poke()
	if strings.Contains(agentLog(), "level=DEBUG") {
		t.Fatalf("debug lines at log_level info:\n%s", agentLog())
	}

	// A finished job, kept for the default day. Forced: this shared
	// machine's real load must not keep it waiting.
	sub, err := cl.Submit(ctx, api.SubmitRequest{RequestID: "reload-" + dir, Owner: "root",
		Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: dir, Force: true, Oversubscribe: true}})
	if err != nil {
		t.Fatal(err)
	}
	var j api.Job
	testcluster.WaitFor(t, 30*time.Second, "the job done", func() bool { j, _ = cl.Job(ctx, sub.ID); return j.State == "done" },
		func() string { return fmt.Sprintf("job %+v\n%s", j, explain()) })

	writeConfig("log_level = \"debug\"\njob_retention = \"1s\"\nbandwidth_interval = \"30m\"\nlatency_interval = \"2h\"\nhttp_idle_timeout = \"2m\"")
	cmd.Process.Signal(syscall.SIGHUP)
	testcluster.WaitFor(t, 15*time.Second, "the reload logged", func() bool {
		l := agentLog()
		return strings.Contains(l, "SIGHUP: config reloaded") &&
			strings.Contains(l, `changed="[log_level INFO -> DEBUG bandwidth_interval 1h0m0s -> 30m0s job_retention 24h0m0s -> 1s latency_interval 1h0m0s -> 2h0m0s]"`) &&
			strings.Contains(l, "needs_restart=[http_idle_timeout]")
	}, explain)
	// The new job retention takes effect: the job is purged, its record left.
	testcluster.WaitFor(t, 30*time.Second, "the job purged after the reload", func() bool {
		hs, err := cl.History(ctx, "")
		return err == nil && len(hs) == 1 && hs[0].ID == sub.ID && hs[0].Purged
	}, explain)
	testcluster.WaitFor(t, 15*time.Second, "a debug line after the reload", func() bool {
		poke()
		return strings.Contains(agentLog(), "level=DEBUG")
	}, explain)

	writeConfig(probes + "log_level = \"loud\"")
	cmd.Process.Signal(syscall.SIGHUP)
	testcluster.WaitFor(t, 15*time.Second, "the bad file refused", func() bool {
		return strings.Contains(agentLog(), "SIGHUP: config not reloaded") && strings.Contains(agentLog(), "shoal.hcl:12: log_level: ")
	}, explain)
	if _, err := cl.Leader(ctx); err != nil {
		t.Fatalf("agent gone after a bad reload: %v\n%s", err, agentLog())
	}
}

// readLogs is the agents' log files, each under its name: what a failed
// wait explains itself with.
func readLogs(logs []string) string {
	var b strings.Builder
	for _, l := range logs {
		out, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "--- %s\n%s", l, out)
	}
	return b.String()
}
