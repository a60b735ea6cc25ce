package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/internal/deadline"
)

// bench-scale runs n agents in one process and prints how each figure
// grows with n, with the growth exponent of each. Gossip: real memberlist
// and shoal's gossip layer over memberlist's in-memory MockNetwork instead
// of sockets (a 1,000-node network this machine cannot hold on sockets).
// Raft: real hashicorp/raft among the first -servers agents over raft's
// InmemTransport. Clients: every other agent follows a server's
// replication feed (agent/replica) over an in-process pipe into its own
// raftfsm.FSM. Jobs: submitted on the leader, placed by the leader core
// (leader.Schedule), timed to the attempt held by their nodes' copies.
// -members adds today's all-members layout (raft alone) at small sizes,
// to set the leader's RPC rate against.
//
// -real runs whole agents instead (agent.Agent, as `shoal agent` runs
// it; scalereal.go) on the in-memory twins (package twins): the same
// figures, from the agent's own gossip, raft roles, client replication
// over HTTPS and leader core, with none of the re-wiring's copies of
// agent code (hookedFSM for the agent's notifying FSM, leaderNodes and
// jobBench.round for the leader's job round, shoalRaftConfig). The
// re-wiring stays the default: it holds sizes whole agents cannot in one
// process (docs/design/scale.md), and it measures the protocols apart
// from the agent's own loops.
//
// Each size runs in a child process of its own, so that one size's heap
// and leftover goroutines do not bend the next size's figures.
func cmdBenchScale(args []string) error {
	fs := flag.NewFlagSet("bench-scale", flag.ExitOnError)
	sizes := fs.String("n", "100,300,1000", "cluster sizes, comma-separated")
	rounds := fs.Int("rounds", 20, "node-state changes timed per size")
	window := fs.Duration("window", 20*time.Second, "steady window over which gossip bytes and the leader's RPCs are counted")
	update := fs.Duration("update", 0, "how often every agent changes its state in the background (an agent samples every 3s); 0 = never, as bench-gossip")
	seed := fs.Uint64("seed", 1, "seed for joins, churn, the agents changed and the network rows")
	servers := fs.Int("servers", 5, "agents that run raft (3 voters, the rest non-voters); the others are clients. 0 = gossip only")
	jobs := fs.Int("jobs", 10, "jobs submitted per size and timed to the attempt on their nodes")
	peerLinks := fs.Int("peer-links", 16, "random peers in each node's row of the servers' network table, besides its 2 switch neighbours (0 = every pair)")
	members := fs.String("members", "20,50", "sizes of today's all-members raft layout to measure the leader's RPC rate at, for contrast; \"\" skips it")
	probeTimeout := fs.Duration("probe-timeout", 0, "memberlist probe timeout (the probe interval is kept at twice it); 0 = the agent's default (500ms, interval 1s). A machine loaded far past its cores needs more, or its starved agents suspect each other")
	suspicion := fs.Int("suspicion-mult", 0, "memberlist suspicion multiplier; 0 = the agent's default (4)")
	compress := fs.Bool("compress", false, "LZW-compress gossip packets and streams as an agent does by default; off here because n agents in one process pay n agents' per-packet LZW tables on the same cores (the bytes figures then count uncompressed packets: an upper bound of an agent's)")
	one := fs.Bool("one", false, "measure the single size -n in this process and print JSON (used by the parent run)")
	membersOne := fs.Bool("members-one", false, "measure the all-members layout at the single size -n and print JSON (used by the parent run)")
	paceLate := fs.Duration("pace-late", 20*time.Millisecond, "start the next agent only while this process's timers fire less than this late (it keeps up with the gossip the joins cause); 0 = join as fast as joins succeed")
	paceOwed := fs.Int64("pace-owed", 12000, "start the next agent only while the joins so far will cause fewer than this many state packets more (the i-th agent's join: i agents re-gossip its state 4·⌈log10(i+1)⌉ times), paid off by the state packets sent or at -pace-rate a second, whichever is more")
	paceRate := fs.Float64("pace-rate", 24000, "state packets a second this process sends and receives at about 1 of the machine's 2 cores (a packet costs 30 to 50 µs here without compression: encryption, decoding, memberlist's queues, the collector; with -compress about twice that, so halve this)")
	memLimit := fs.Int64("mem-limit", 8, "the size's process collects garbage at GOGC=400 up to this many GiB (GOMEMLIMIT), unless GOGC or GOMEMLIMIT is set")
	quietTimeout := fs.Duration("quiet-timeout", 0, "how long to wait, after the join, for gossip to go quiet (the agents sending under 2 KiB/s of packets each) before measuring; 0 = 60s + 600ms an agent")
	results := fs.String("results", "", "directory of each size's result (n<N>.json): a size whose result is there is read, not run, and a size run is saved there; so sizes measured in separate runs (each under the heavy lock) print as one table and one fit")
	profile := fs.String("profile", "", "write each size's pprof profiles into this directory: CPU cut at each stage (cpu-to-joined: the join; cpu-to-quiet; cpu-to-end: the measuring), and heap, goroutines, blocking and mutex waits after the join (joined), once gossip is quiet (quiet) and at the end (end); a size stopped by SIGTERM or SIGINT writes them as they stand (killed)")
	real := fs.Bool("real", false, "run whole agents (agent.Agent) on the in-memory twins instead of the harness's re-wiring of their parts; needs -servers 3 or more; -members is skipped")
	shoalBin := fs.String("shoal", "", "with -real: the shoal binary the agents start jobs through (its shoal-exec beside it); default the shoal beside this binary")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof at this address (host:port) in each size's process, to look into a size while it runs")
	limit := deadline.Flag(fs, 3*time.Hour)
	fs.Parse(args)
	defer deadline.Start("bench-scale", *limit)()
	ns, err := parseSizes(*sizes)
	if err != nil {
		return err
	}
	if *rounds < 1 || *window <= 0 || *update < 0 || *paceLate < 0 || *paceOwed < 1 || *paceRate <= 0 || *memLimit < 1 || *quietTimeout < 0 || *servers < 0 || *jobs < 0 || *peerLinks < 0 {
		return fmt.Errorf("-rounds, -pace-owed, -mem-limit must be >= 1, -window, -pace-rate > 0, and -update, -pace-late, -quiet-timeout, -servers, -jobs, -peer-links >= 0")
	}
	if *servers > 0 && *servers < 3 {
		return fmt.Errorf("-servers %d: want 0 (gossip only) or 3 and more (3 voters, the rest non-voters)", *servers)
	}
	if *real && *servers < 3 {
		return fmt.Errorf("-real -servers %d: real agents run raft; want 3 or more", *servers)
	}
	if *real && *shoalBin == "" {
		if *shoalBin, err = besideSelf("shoal"); err != nil {
			return err
		}
	}
	var ms []int
	if !*real && strings.TrimSpace(*members) != "" {
		if ms, err = parseSizes(*members); err != nil {
			return err
		}
	}
	o := scaleOpts{Rounds: *rounds, Window: *window, Update: *update, Seed: *seed, Config: scaleConfig(),
		Servers: *servers, Jobs: *jobs, PeerLinks: *peerLinks, QuietTimeout: *quietTimeout, PaceLate: *paceLate, PaceOwed: *paceOwed, PaceRate: *paceRate,
		Real: *real, Bin: *shoalBin}
	if *probeTimeout > 0 {
		// memberlist wants the timeout under the interval: the interval
		// keeps the agent's ratio (1 s to 500 ms).
		o.Config.ProbeTimeout = *probeTimeout
		o.Config.ProbeInterval = max(o.Config.ProbeInterval, 2**probeTimeout)
	}
	if *suspicion > 0 {
		o.Config.SuspicionMult = *suspicion
	}
	o.Config.Compression = *compress
	settings := scaleSettings(o.Config, *paceLate, *paceOwed, *paceRate, *memLimit)
	if *real {
		settings += " -real"
	}
	if *one || *membersOne {
		if len(ns) != 1 {
			return fmt.Errorf("-one measures one size; got -n %s", *sizes)
		}
		o.N = ns[0]
		if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
			// Half of a size's CPU went to the collector at GOGC=100 (a
			// profile at 300 agents with -compress: memberlist allocates an
			// LZW table per packet; without it, 10 % at 1,000 at GOGC=400:
			// its per-packet AES-GCM setup, msgpack and push/pull buffers).
			// Collect less often, up to -mem-limit GiB: the protocol is
			// unchanged, the machine's two cores go to the agents.
			debug.SetGCPercent(400)
			debug.SetMemoryLimit(*memLimit << 30)
		}
		if *pprofAddr != "" {
			if err := servePprof(*pprofAddr); err != nil {
				return err
			}
		}
		// Where a size's CPU, heap and waits go, for the notes in
		// docs/design/scale.md.
		prof, err := startProfiler(*profile, o.N)
		if err != nil {
			return err
		}
		defer prof.stop()
		prof.onSignal()
		o.prof = prof
		var r scaleResult
		if *membersOne {
			r = scaleResult{N: o.N, Servers: o.N, LoadStart: loadAvg()}
			r.LeaderRPCs, err = membersRPCRate(o.N, o.Window)
			r.LoadEnd = loadAvg()
		} else if o.Real {
			r, err = runRealScale(context.Background(), o)
		} else {
			r, err = runScale(context.Background(), o)
		}
		r.Settings = settings
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary to run each size: %w", err)
	}
	child := func(mode string, n int) (scaleResult, error) {
		var r scaleResult
		cmd := exec.Command(exe, "bench-scale", mode, "-n", strconv.Itoa(n), "-rounds", strconv.Itoa(*rounds),
			"-window", window.String(), "-update", update.String(), "-seed", strconv.FormatUint(*seed, 10),
			"-servers", strconv.Itoa(*servers), "-jobs", strconv.Itoa(*jobs), "-peer-links", strconv.Itoa(*peerLinks),
			"-probe-timeout", probeTimeout.String(), "-suspicion-mult", strconv.Itoa(*suspicion), "-compress="+strconv.FormatBool(*compress),
			"-quiet-timeout", quietTimeout.String(), "-pace-late", paceLate.String(), "-pace-owed", strconv.FormatInt(*paceOwed, 10), "-pace-rate", strconv.FormatFloat(*paceRate, 'f', -1, 64), "-mem-limit", strconv.FormatInt(*memLimit, 10), "-profile", *profile, "-pprof", *pprofAddr,
			"-real="+strconv.FormatBool(*real), "-shoal", *shoalBin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return r, fmt.Errorf("%d agents: %w", n, err)
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return r, fmt.Errorf("%d agents: read result: %w", n, err)
		}
		return r, nil
	}
	var mrs []scaleResult
	for _, m := range ms {
		fmt.Fprintf(os.Stderr, "all-members raft, %d members...\n", m)
		r, err := child("-members-one", m)
		if err != nil {
			return err
		}
		mrs = append(mrs, r)
		fmt.Fprintf(os.Stderr, "all-members raft, %d members: leader %.0f RPCs/s\n", m, r.LeaderRPCs)
	}
	var rs []scaleResult
	var differ []string
	for _, n := range ns {
		if *results != "" {
			// A size measured before (another locked run) is read back, so
			// one table and one fit hold sizes measured in separate runs.
			if r, ok, err := loadResult(*results, n); err != nil {
				return err
			} else if ok {
				fmt.Fprintf(os.Stderr, "%d agents: read from %s (measured %s)\n", n, resultPath(*results, n), r.At)
				if r.Settings != settings {
					differ = append(differ, fmt.Sprintf("%d agents were measured with %s", n, orUnknown(r.Settings)))
				}
				rs = append(rs, r)
				continue
			}
		}
		fmt.Fprintf(os.Stderr, "%d agents...\n", n)
		r, err := child("-one", n)
		if err == nil && *results != "" {
			err = saveResult(*results, r)
		}
		if err != nil {
			// The sizes measured so far are still worth printing.
			fmt.Fprintf(os.Stderr, "%v\n", err)
			if len(rs) == 0 {
				return err
			}
			break
		}
		rs = append(rs, r)
		fmt.Fprintf(os.Stderr, "%d agents: joined in %.1f s (%.0f s paced, %d joins retried, %d packets dropped), quiet %.0f s later, p90 %.0f ms, submit->attempt p90 %.0f ms, leader %.0f RPCs/s, cores %.2f/%.2f/%.2f (join/window/conv), load %.1f-%.1f\n",
			n, r.JoinSeconds, r.PaceWaitS, r.JoinRetries, r.PacketsDropped, r.QuietSeconds, r.ConvP90ms, r.AttemptP90ms, r.LeaderRPCs, r.CoresJoin, r.CoresWindow, r.CoresConv, r.LoadStart, r.LoadEnd)
	}
	realFlag := ""
	if *real {
		realFlag = " -real"
	}
	fmt.Printf("bench-scale%s -n %s -rounds %d -window %v -update %v -seed %d -servers %d -jobs %d -peer-links %d -members %q -probe-timeout %v -suspicion-mult %d -pace-late %v -pace-owed %d -pace-rate %.0f -mem-limit %d -compress=%v (probe interval %v)\n",
		realFlag, *sizes, *rounds, *window, *update, *seed, *servers, *jobs, *peerLinks, *members, o.Config.ProbeTimeout, o.Config.SuspicionMult, *paceLate, *paceOwed, *paceRate, *memLimit, o.Config.Compression, o.Config.ProbeInterval)
	for _, d := range differ {
		fmt.Printf("  (not this command's settings: %s)\n", d)
	}
	if *real {
		fmt.Printf("agents: %s whole agent.Agents in one process, gossip and raft on the in-memory twins (testcluster/twins), the API and the clients' replication over HTTPS on loopback;\n", *sizes)
		fmt.Printf("raft as the agent assigns it (%d servers, %d voters, 500/500/250/50 ms timings); samples and probe beats every -update (never with 0), bandwidth tests and link checks off\n",
			*servers, min(3, *servers))
	} else {
		fmt.Printf("gossip: real memberlist + shoal gossip over memberlist's in-memory MockNetwork (not sockets), one process, no network rows in gossip;\n")
		fmt.Printf("raft: real hashicorp/raft among %d servers (%d voters) over raft's InmemTransport; clients: agent/replica followers over in-process pipes\n",
			*servers, min(3, *servers))
	}
	printScale(os.Stdout, rs, mrs)
	return nil
}

// scaleConfig is the agent's own gossip settings (DefaultConfig), with
// encryption on as every agent runs it (the stream guard admits only
// encrypted streams) and the per-source stream cap lifted: every
// in-memory stream has the same (empty) source address.
func scaleConfig() gossip.Config {
	c := gossip.DefaultConfig()
	c.Key = []byte("bench-scale gossip key, 32 bytes")
	c.MaxStreamsPerSource = c.MaxInboundStreams
	// An agent republishes its state with its network coordinate every
	// CoordinateInterval (10 s) when nothing else changed it: background
	// state changes, which -update sets here (-update 10s is that rate).
	// Coordinates still ride every ping's ack. With the republishing on,
	// 1,000 agents make 100 state changes a second, past wall 2 of
	// docs/design/scale.md, and every agent sends its 40 packets a second: more
	// compression, encryption and decoding than two cores hold for 1,000.
	c.CoordinateInterval = 24 * time.Hour
	return c
}

// scaleSettings names the settings a size's figures depend on, as the
// flags that set them.
func scaleSettings(c gossip.Config, paceLate time.Duration, paceOwed int64, paceRate float64, memLimit int64) string {
	return fmt.Sprintf("-probe-timeout %v -suspicion-mult %d -compress=%v -pace-late %v -pace-owed %d -pace-rate %.0f -mem-limit %d",
		c.ProbeTimeout, c.SuspicionMult, c.Compression, paceLate, paceOwed, paceRate, memLimit)
}

// besideSelf is the program name in this binary's directory (bin/, as
// make build lays it out).
func besideSelf(name string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own binary: %w", err)
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("-real: no %s beside %s to start jobs through: run make build, or pass -shoal PATH", name, exe)
	}
	return p, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "settings not recorded"
	}
	return s
}

func resultPath(dir string, n int) string { return filepath.Join(dir, fmt.Sprintf("n%d.json", n)) }

// loadResult reads size n's saved result, if there is one.
func loadResult(dir string, n int) (scaleResult, bool, error) {
	var r scaleResult
	b, err := os.ReadFile(resultPath(dir, n))
	if errors.Is(err, fs.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read saved result: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil || r.N != n {
		return r, false, fmt.Errorf("saved result %s: not a result of %d agents (%v)", resultPath(dir, n), n, err)
	}
	return r, true, nil
}

// saveResult writes a size's result for a later run's table.
func saveResult(dir string, r scaleResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save result: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("save result: %w", err)
	}
	if err := os.WriteFile(resultPath(dir, r.N), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("save result: %w", err)
	}
	return nil
}

// fmtQuiet prints waitQuiet's outcome: seconds, or "> s" when it gave up.
func fmtQuiet(s float64) string {
	if s < 0 {
		return fmt.Sprintf("> %.0f", -s)
	}
	return fmt.Sprintf("%.0f", s)
}

func parseSizes(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("bad size %q in -n: want integers >= 2, e.g. -n 100,300,1000", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// scaleColumn is one figure fitted and extrapolated.
type scaleColumn struct {
	name string
	get  func(scaleResult) float64
	fmt  func(float64) string
}

func fmtMs(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func fmtRate(v float64) string { return fmt.Sprintf("%.0f/s", v) }

// gossipColumns and raftColumns are the two tables' figures, in order.
var gossipColumns = []scaleColumn{
	{"conv p50", func(r scaleResult) float64 { return r.ConvP50ms }, fmtMs},
	{"conv p90", func(r scaleResult) float64 { return r.ConvP90ms }, fmtMs},
	{"gossip B/node/s", func(r scaleResult) float64 { return r.BytesPerNode }, humanBytes},
	{"push/pull", func(r scaleResult) float64 { return float64(r.PushPull) }, humanBytes},
	{"push/pull with rows", func(r scaleResult) float64 { return float64(r.PushPullRows) }, humanBytes},
	{"heap/agent", func(r scaleResult) float64 { return r.HeapPerAgent }, humanBytes},
	{"heap/agent joined", func(r scaleResult) float64 { return r.HeapJoined }, humanBytes},
	{"rss peak/agent", func(r scaleResult) float64 { return r.RSSPeak }, humanBytes},
	{"rows table/server", func(r scaleResult) float64 { return r.RowsPerAgent }, humanBytes},
}

var raftColumns = []scaleColumn{
	{"leader RPC/s", func(r scaleResult) float64 { return r.LeaderRPCs }, fmtRate},
	{"leader RPC/s jobs", func(r scaleResult) float64 { return r.LeaderRPCsJobs }, fmtRate},
	{"submit->attempt p50", func(r scaleResult) float64 { return r.AttemptP50ms }, fmtMs},
	{"submit->attempt p90", func(r scaleResult) float64 { return r.AttemptP90ms }, fmtMs},
	{"placement p50", func(r scaleResult) float64 { return r.PlaceP50ms }, fmtMs},
	{"placement p90", func(r scaleResult) float64 { return r.PlaceP90ms }, fmtMs},
	{"replica heap/client", func(r scaleResult) float64 { return r.ReplicaHeap }, humanBytes},
	{"replica B/client/s", func(r scaleResult) float64 { return r.ReplicaBytes }, humanBytes},
}

func printScale(w io.Writer, rs, members []scaleResult) {
	printColumns(w, "nodes,min alive,join s,quiet s,drops,cores join/window/conv", rs, gossipColumns, func(r scaleResult) []string {
		return []string{strconv.Itoa(r.N), strconv.Itoa(r.MinAlive), fmt.Sprintf("%.0f", r.JoinSeconds), fmtQuiet(r.QuietSeconds),
			strconv.FormatInt(r.PacketsDropped, 10), fmt.Sprintf("%.2f/%.2f/%.2f", r.CoresJoin, r.CoresWindow, r.CoresConv)}
	})
	fmt.Fprintln(w, "quiet s: after the join, until the agents send under 2 KiB/s of packets each (their queues of states to re-gossip drained; \">\": gave up waiting).")
	fmt.Fprintln(w, "cores: the CPU this one process used (the machine has 2, shared) while agents joined, over the window, over the timed changes.")
	fmt.Fprintln(w, "heap/agent: live heap of the gossip agents once quiet, per agent; joined: when every agent first saw 99% alive; rss peak: VmHWM / n.")
	fmt.Fprintln(w, "push/pull: one LocalState as gossip encodes it (every node's state, no rows); \"with rows\": the same with every node's")
	fmt.Fprintln(w, "full network row (n-1 peers, the layout before rows went to the servers), computed by encoding, not run: 1,000 agents with rows would hold")
	fmt.Fprintln(w, "10^9 row cells in one process. memberlist refuses push/pull state over 20 MiB; shoal's decoder over 8 MiB.")
	fmt.Fprintln(w)
	if len(rs) > 0 && rs[0].Mode == "real" {
		var rows [][]string
		for _, r := range rs {
			rows = append(rows, []string{strconv.Itoa(r.N), humanBytes(r.HeapPerAgent), fmt.Sprintf("%.0f", r.Goroutines),
				fmt.Sprintf("%.2f", r.CoresWindow), fmt.Sprintf("%.1f", 1000*r.CoresWindow/float64(r.N)), humanBytes(r.RSSPeak), fmt.Sprintf("%.1f", r.StateChanges), fmt.Sprintf("%d of %d", r.OpenFiles, r.NoFile), fmt.Sprintf("%.1f", r.ReplicaReadyS)})
		}
		fmt.Fprintln(w, "whole agents: what each costs in this one process once quiet (the window: idle, clients following, no jobs):")
		table(w, "nodes,heap/agent,goroutines/agent,cores (window),millicores/agent,rss peak/agent,state changes/s,open files,raft+replicas ready s", rows)
		fmt.Fprintln(w, "placement and replica columns below are the re-wired harness's alone (0 here): the leader core places inside the agent, and a client's")
		fmt.Fprintln(w, "replica is part of its agent's heap.")
		fmt.Fprintln(w)
	}
	if len(rs) > 0 && rs[0].Servers > 0 {
		printColumns(w, "nodes,servers,RPC peers,elections,jobs (client hosts/hosts),load", rs, raftColumns, func(r scaleResult) []string {
			return []string{strconv.Itoa(r.N), strconv.Itoa(r.Servers), strconv.Itoa(r.RPCPeers), strconv.FormatUint(r.Elections, 10), fmt.Sprintf("%d (%d/%d)", r.Jobs, r.ClientHosts, r.TotalHosts),
				fmt.Sprintf("%.1f-%.1f", r.LoadStart, r.LoadEnd)}
		})
		fmt.Fprintln(w, "leader RPC/s: RPCs the raft servers send (the leader's heartbeats, commit-index appends, replication; votes if elections > 0) over the window, clients")
		fmt.Fprintln(w, "following; \"jobs\": over the job rounds. submit->attempt: submit_job proposed on the leader to the attempt held in")
		fmt.Fprintln(w, "the own FSM of every node the job runs on (server raft FSM or client replica). placement: leader.Schedule's round.")
		fmt.Fprintln(w)
	}
	if len(members) > 0 {
		printMembers(w, members, rs)
	}
}

// printColumns prints one table: a row per size, the growth exponent of
// each column and its value carried to 10,000 nodes.
func printColumns(w io.Writer, lead string, rs []scaleResult, cols []scaleColumn, first func(scaleResult) []string) {
	header := lead
	for _, c := range cols {
		header += "," + c.name
	}
	pad := len(strings.Split(lead, ",")) - 1
	var rows [][]string
	ns := make([]int, len(rs))
	for i, r := range rs {
		ns[i] = r.N
		row := first(r)
		for _, c := range cols {
			row = append(row, c.fmt(c.get(r)))
		}
		rows = append(rows, row)
	}
	exp := append([]string{"growth"}, make([]string, pad)...)
	at10k := append([]string{"10,000 (extrapolated)"}, make([]string, pad)...)
	for _, c := range cols {
		ys := make([]float64, len(rs))
		for i, r := range rs {
			ys[i] = c.get(r)
		}
		k, ok := growthExponent(ns, ys)
		exp = append(exp, fmtExponent(k, ok))
		if ok {
			at10k = append(at10k, c.fmt(extrapolate(ns[len(ns)-1], ys[len(ys)-1], k, 10000)))
		} else {
			at10k = append(at10k, "-")
		}
	}
	rows = append(rows, exp, at10k)
	table(w, header, rows)
}

// printMembers prints today's all-members layout: the leader's RPC rate
// measured at small sizes, its fit, and the rate carried to the sizes of
// the main run and to 10,000, beside raft's own arithmetic (two streams
// to each follower, each every 50-100 ms: about 26.7 RPCs/s a follower).
func printMembers(w io.Writer, members, rs []scaleResult) {
	ns, ys := make([]int, len(members)), make([]float64, len(members))
	var rows [][]string
	for i, r := range members {
		ns[i], ys[i] = r.N, r.LeaderRPCs
		rows = append(rows, []string{strconv.Itoa(r.N), "measured", fmtRate(r.LeaderRPCs), fmtRate(raftArithmetic(r.N))})
	}
	k, ok := growthExponent(ns, ys)
	if ok {
		last := members[len(members)-1]
		for _, r := range append(rs, scaleResult{N: 10000}) {
			rows = append(rows, []string{strconv.Itoa(r.N), "extrapolated " + fmtExponent(k, ok),
				fmtRate(extrapolate(last.N, last.LeaderRPCs, k, r.N)), fmtRate(raftArithmetic(r.N))})
		}
	}
	fmt.Fprintln(w, "today's all-members layout (every agent a raft member: 3 voters, the rest non-voters; raft alone, idle):")
	table(w, "members,how,leader RPC/s,raft's arithmetic", rows)
}

// raftArithmetic is the idle leader's RPC rate raft's timers give with m
// members at shoal's timings: to each of m-1 followers a heartbeat every
// HeartbeatTimeout/10 to /5 (50-100 ms) and a commit-index append every
// CommitTimeout to 2x (50-100 ms), 1/75 ms each on average.
func raftArithmetic(m int) float64 { return float64(m-1) * 2 * 1000 / 75 }

func humanBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}
