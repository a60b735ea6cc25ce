package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agentconfig"
)

func agentCommand() *cli.Command {
	d := agent.DefaultConfig()
	return &cli.Command{
		Name:  "agent",
		Usage: "run the shoal agent on this node",
		Description: `Runs until SIGINT or SIGTERM, then ends this node's jobs and leaves the cluster
gracefully. SIGUSR2 stops it for a restart instead (the packaged unit's
RestartKillSignal): a job that runs as one process on this node keeps
running under its supervisor and the agent's next start adopts it; other
jobs' processes here end.

Examples:
  # first three nodes of a new cluster
  shoal agent --data-dir /var/lib/shoal --token-file /etc/shoal/token --join node1 --join node2
  # a node with accelerators shoal cannot detect
  shoal agent --data-dir /var/lib/shoal --token-file /etc/shoal/token --join node1 --pe fpga=2
  # the packaged service: settings in a file
  shoal agent --config /etc/shoal/shoal.hcl
  # a single-node cluster
  shoal agent --data-dir /tmp/shoal --token-file token --bootstrap-expect 1`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", EnvVars: []string{"SHOAL_CONFIG"}, Usage: "HCL `FILE` with the settings below as keys, data-dir as data_dir (see shoal.hcl(5)); flags override it"},
			&cli.BoolFlag{Name: "validate", Usage: "check --config FILE and the flags as the agent would start with them, then exit: 0 valid, 2 not"},
			&cli.StringFlag{Name: "name", EnvVars: []string{"SHOAL_NAME"}, Usage: "node `NAME` (default: hostname)"},
			&cli.StringFlag{Name: "bind", Value: d.BindAddr, EnvVars: []string{"SHOAL_BIND"}, Usage: "`IP` to listen on"},
			&cli.StringFlag{Name: "advertise", EnvVars: []string{"SHOAL_ADVERTISE"}, Usage: "`IP` other nodes use (default: --bind)"},
			&cli.IntFlag{Name: "gossip-port", Value: d.GossipPort, EnvVars: []string{"SHOAL_GOSSIP_PORT"}, Usage: "TCP+UDP `PORT` for gossip"},
			&cli.IntFlag{Name: "raft-port", Value: d.RaftPort, EnvVars: []string{"SHOAL_RAFT_PORT"}, Usage: "TCP `PORT` for raft"},
			&cli.IntFlag{Name: "http-port", Value: d.HTTPPort, EnvVars: []string{"SHOAL_HTTP_PORT"}, Usage: "TCP `PORT` for the HTTP API"},
			&cli.StringSliceFlag{Name: "join", EnvVars: []string{"SHOAL_JOIN"}, Usage: "`ADDR` (host or host:gossip-port) of an agent to join; repeatable; retried with backoff"},
			&cli.StringFlag{Name: "data-dir", EnvVars: []string{"SHOAL_DATA_DIR"}, Usage: "`DIR` for raft's log and snapshots (required)"},
			&cli.StringFlag{Name: "token-file", EnvVars: []string{"SHOAL_TOKEN_FILE"}, Usage: "`FILE` holding the cluster token (required; see 'shoal keygen')"},
			&cli.StringFlag{Name: "tls-ca-file", EnvVars: []string{"SHOAL_TLS_CA_FILE"}, Usage: "PEM `FILE` of the CA certificates to trust instead of the CA derived from the token (several during a rotation)"},
			&cli.StringFlag{Name: "tls-cert-file", EnvVars: []string{"SHOAL_TLS_CERT_FILE"}, Usage: "this agent's certificate, PEM `FILE` (default: issued from the token's CA at start)"},
			&cli.StringFlag{Name: "tls-key-file", EnvVars: []string{"SHOAL_TLS_KEY_FILE"}, Usage: "the key of --tls-cert-file, PEM `FILE`"},
			&cli.StringFlag{Name: "socket", EnvVars: []string{"SHOAL_SOCKET"}, Usage: "Unix socket `PATH` where local users reach the API as themselves, without the token (default: DATA-DIR/shoal.sock; \"" + agent.SocketOff + "\": none)"},
			&cli.DurationFlag{Name: "sample-interval", Value: d.SampleInterval, EnvVars: []string{"SHOAL_SAMPLE_INTERVAL"}, Usage: "how often node state is sampled and gossiped"},
			&cli.StringSliceFlag{Name: "pe", EnvVars: []string{"SHOAL_PE"}, Usage: "declare processing elements shoal cannot detect, `KIND=COUNT`; repeatable"},
			&cli.StringFlag{Name: "switch", EnvVars: []string{"SHOAL_SWITCH"}, Usage: "`NAME` of the rack or switch this node hangs off"},
			&cli.StringSliceFlag{Name: "feature", EnvVars: []string{"SHOAL_FEATURE"}, Usage: "a `NAME` for what this node offers (ib, avx512, bigmem), which jobs select with --constraint; repeatable"},
			&cli.IntFlag{Name: "bootstrap-expect", Value: d.BootstrapExpect, EnvVars: []string{"SHOAL_BOOTSTRAP_EXPECT"}, Usage: "bootstrap raft once `N` agents see each other (1 for a single node)"},
			&cli.IntFlag{Name: "voters", EnvVars: []string{"SHOAL_VOTERS"}, Usage: "target number of raft voters, `N`", DefaultText: "bootstrap-expect"},
			&cli.IntFlag{Name: "servers", Value: d.Servers, EnvVars: []string{"SHOAL_SERVERS"}, Usage: "target number of raft servers, `N`, voters included; the other agents are clients (at least --voters)"},
			&cli.StringSliceFlag{Name: "job-rlimit", EnvVars: []string{"SHOAL_JOB_RLIMIT"}, Usage: "resource limit every job starts with, `RES=SOFT[:HARD]` (ulimit names: nofile, nproc, memlock, stack, core, as, ...; \"unlimited\"); repeatable; over the system's defaults (PID 1's limits, nofile soft at most 1024)"},
			&cli.BoolFlag{Name: "cgroups", Value: true, EnvVars: []string{"SHOAL_CGROUPS"}, Usage: "confine every job attempt in a cgroup of its own (memory and CPU limits, kill, usage); false runs jobs unconfined and refuses --mem jobs"},
			&cli.BoolFlag{Name: "publish-output", EnvVars: []string{"SHOAL_PUBLISH_OUTPUT"}, Usage: "let every local user read every job's output ('shoal logs'); default: only its owner, root and token holders"},
			&cli.DurationFlag{Name: "placement-model-wait", Value: d.PlacementModelWait, EnvVars: []string{"SHOAL_PLACEMENT_MODEL_WAIT"}, Usage: "how long a job of a network-aware policy (netload, paper) stays pending, and 'shoal alloc' waits, for the network model to cover the nodes (right after a cluster forms); 0: place at once"},
			&cli.DurationFlag{Name: "job-retention", Value: d.JobRetention, EnvVars: []string{"SHOAL_JOB_RETENTION"}, Usage: "how long finished jobs and their logs are kept before they are purged (0: forever)"},
			&cli.DurationFlag{Name: "history-retention", Value: d.HistoryRetention, EnvVars: []string{"SHOAL_HISTORY_RETENTION"}, Usage: "how long the record of a purged job stays for 'shoal history' (0: keep the newest 10000)"},
			&cli.IntFlag{Name: "max-queued-jobs", Value: d.Limits.QueuedJobs, EnvVars: []string{"SHOAL_MAX_QUEUED_JOBS"}, Usage: "queued jobs one user may have, cluster-wide (0: no limit)"},
			&cli.IntFlag{Name: "max-user-procs", Value: d.Limits.Procs, EnvVars: []string{"SHOAL_MAX_USER_PROCS"}, Usage: "CPUs (processes × --cpus-per-rank) one user's unfinished jobs may ask for, cluster-wide (0: no limit)"},
			&cli.IntFlag{Name: "max-spec-bytes", Value: d.Limits.SpecBytes, EnvVars: []string{"SHOAL_MAX_SPEC_BYTES"}, Usage: "size of one job's spec as JSON, in `BYTES` (0: no limit)"},
			&cli.IntFlag{Name: "max-argv", Value: d.Limits.Argv, EnvVars: []string{"SHOAL_MAX_ARGV"}, Usage: "arguments of one job's command line (0: no limit)"},
			&cli.IntFlag{Name: "max-env", Value: d.Limits.Env, EnvVars: []string{"SHOAL_MAX_ENV"}, Usage: "environment variables of one job (0: no limit)"},
			&cli.IntFlag{Name: "max-finished-jobs", Value: d.Limits.FinishedJobs, EnvVars: []string{"SHOAL_MAX_FINISHED_JOBS"}, Usage: "finished jobs (done, failed, killed) one user keeps in the cluster's state; beyond, the oldest leave for 'shoal history' (0: no limit, only --job-retention)"},
			&cli.DurationFlag{Name: "fence-lease", Value: d.Fence.Lease, EnvVars: []string{"SHOAL_FENCE_LEASE"}, Usage: "how long this node runs its jobs' processes without word from the leader before they are frozen; the leader retries a lost node's jobs only after the lease and a margin (0: no fencing)"},
			&cli.DurationFlag{Name: "dead-voter-grace", Value: d.DeadVoterGrace, EnvVars: []string{"SHOAL_DEAD_VOTER_GRACE"}, Usage: "how long a voter may be dead before it is replaced"},
			&cli.DurationFlag{Name: "join-timeout", EnvVars: []string{"SHOAL_JOIN_TIMEOUT"}, Usage: "give up and exit if no --join address answers within this time", DefaultText: "keep trying"},
			&cli.IntFlag{Name: "probe-port", Value: d.Probes.Port, EnvVars: []string{"SHOAL_PROBE_PORT"}, Usage: "TCP+UDP `PORT` of the probe server (bandwidth tests, latency echo)"},
			&cli.DurationFlag{Name: "latency-interval", Value: d.Probes.LatencyInterval, EnvVars: []string{"SHOAL_LATENCY_INTERVAL"}, Usage: "how often every peer is pinged"},
			&cli.DurationFlag{Name: "bandwidth-interval", Value: d.Probes.BandwidthInterval, EnvVars: []string{"SHOAL_BANDWIDTH_INTERVAL"}, Usage: "how often a bandwidth cycle starts"},
			&cli.StringFlag{Name: "bandwidth-bytes", Value: "4MiB", EnvVars: []string{"SHOAL_BANDWIDTH_BYTES"}, Usage: "`SIZE` of one bandwidth test, both directions together (e.g. 4MiB, 500KB)"},
			&cli.DurationFlag{Name: "bandwidth-timeout", Value: d.Probes.BandwidthTimeout, EnvVars: []string{"SHOAL_BANDWIDTH_TIMEOUT"}, Usage: "longest one bandwidth test may take, both directions together"},
			&cli.StringFlag{Name: "probe-budget", Value: "1GiB", EnvVars: []string{"SHOAL_PROBE_BUDGET"}, Usage: "bandwidth-test bytes per node per hour, `SIZE` (0: no cap)"},
			&cli.DurationFlag{Name: "link-check-interval", Value: d.Probes.LinkCheck.Interval, EnvVars: []string{"SHOAL_LINK_CHECK_INTERVAL"}, Usage: "how often this node checks its own link with a short test to one quiet peer, so that a link that changed is tested again within seconds, not at the next bandwidth cycle; its traffic comes off --probe-budget (0: no checks)"},
			&cli.StringFlag{Name: "link-check-bytes", Value: "512KiB", EnvVars: []string{"SHOAL_LINK_CHECK_BYTES"}, Usage: "`SIZE` of one link check, both directions together; several times a shaped link's burst (e.g. 512KiB)"},
			&cli.IntFlag{Name: "latency-peers", Value: d.Probes.LatencyPeers, EnvVars: []string{"SHOAL_LATENCY_PEERS"}, Usage: "peers the latency probe pings, `N` (its own switch's first, then uncertain coordinates, then others; coordinates estimate the rest); 0-4096, 0: the default"},
			&cli.IntFlag{Name: "topo-own-offsets", Value: d.Probes.Topo.OwnOffsets, EnvVars: []string{"SHOAL_TOPO_OWN_OFFSETS"}, Usage: "ring offsets of its own switch each node is tested at per bandwidth cycle, `N` (1-8; the leader's)"},
			&cli.IntFlag{Name: "topo-pair-tests", Value: d.Probes.Topo.PairTests, EnvVars: []string{"SHOAL_TOPO_PAIR_TESTS"}, Usage: "tests each switch pair gets per bandwidth cycle when the caps allow, `N` (1-8; the leader's)"},
			&cli.IntFlag{Name: "topo-cross-per-switch", Value: d.Probes.Topo.CrossPerSwitch, EnvVars: []string{"SHOAL_TOPO_CROSS_PER_SWITCH"}, Usage: "cross-switch tests of one switch's uplink per bandwidth cycle at most, `N` (1-1024; the leader's)"},
			&cli.IntFlag{Name: "topo-cross-per-node", Value: d.Probes.Topo.CrossPerNode, EnvVars: []string{"SHOAL_TOPO_CROSS_PER_NODE"}, Usage: "cross-switch tests of one node per bandwidth cycle at most, `N` (1-64; the leader's)"},
			&cli.IntFlag{Name: "topo-uncertain-per-node", Value: d.Probes.Topo.UncertainPerNode, EnvVars: []string{"SHOAL_TOPO_UNCERTAIN_PER_NODE"}, Usage: "direct tests of pairs the network model doubts, per node per bandwidth cycle, `N` (0-64; the leader's)"},
			&cli.IntFlag{Name: "topo-explore-per-node", Value: d.Probes.Topo.ExplorePerNode, EnvVars: []string{"SHOAL_TOPO_EXPLORE_PER_NODE"}, Usage: "tests per bandwidth cycle of a node whose switch is unknown, `N` (1-64; the leader's)"},
			&cli.IntFlag{Name: "topo-small-cluster", Value: d.Probes.Topo.SmallCluster, EnvVars: []string{"SHOAL_TOPO_SMALL_CLUSTER"}, Usage: "test every pair in a cluster of at most `N` members instead of the model's tests (0: when every node can test every other within the per-node caps; -1: never; at most 1024; the leader's)"},
			&cli.DurationFlag{Name: "netrow-min-interval", Value: d.Rows.MinInterval, EnvVars: []string{"SHOAL_NETROW_MIN_INTERVAL"}, Usage: "least time between two sends of this node's changed network row to one server"},
			&cli.DurationFlag{Name: "netrow-refresh", Value: d.Rows.Refresh, EnvVars: []string{"SHOAL_NETROW_REFRESH"}, Usage: "how often this node's network row goes to every server even unchanged (at least --netrow-min-interval)"},
			&cli.DurationFlag{Name: "netrow-send-timeout", Value: d.Rows.SendTimeout, EnvVars: []string{"SHOAL_NETROW_SEND_TIMEOUT"}, Usage: "longest one send of the network row to a server may take"},
			&cli.IntFlag{Name: "http-max-conns", Value: d.HTTP.MaxConns, EnvVars: []string{"SHOAL_HTTP_MAX_CONNS"}, Usage: "open API connections at most, `N` per listener (TCP, local socket)"},
			&cli.IntFlag{Name: "http-max-conns-per-source", Value: d.HTTP.MaxConnsPerSource, EnvVars: []string{"SHOAL_HTTP_MAX_CONNS_PER_SOURCE"}, Usage: "open API connections at most from one IP address, `N`"},
			&cli.IntFlag{Name: "http-max-conns-per-user", Value: d.HTTP.MaxConnsPerUser, EnvVars: []string{"SHOAL_HTTP_MAX_CONNS_PER_USER"}, Usage: "open local-socket connections at most of one user (uid), `N`"},
			&cli.DurationFlag{Name: "http-idle-timeout", Value: d.HTTP.IdleTimeout, EnvVars: []string{"SHOAL_HTTP_IDLE_TIMEOUT"}, Usage: "close a kept-alive API connection idle this long"},
			&cli.DurationFlag{Name: "http-request-timeout", Value: d.HTTP.RequestTimeout, EnvVars: []string{"SHOAL_HTTP_REQUEST_TIMEOUT"}, Usage: "longest time to read a request and write its answer (streamed logs and exec excepted)"},
			&cli.IntFlag{Name: "gossip-max-streams", Value: d.Gossip.MaxInboundStreams, EnvVars: []string{"SHOAL_GOSSIP_MAX_STREAMS"}, Usage: "open inbound gossip TCP streams at most, `N`"},
			&cli.BoolFlag{Name: "coordinates", Value: d.Gossip.Coordinates, EnvVars: []string{"SHOAL_COORDINATES"}, Usage: "keep a Vivaldi network coordinate, fed by gossip's pings, so 'shoal rtt' and 'shoal net' estimate every pair's round trip; false leaves it out of acks and node state"},
			&cli.IntFlag{Name: "coordinate-min-of", Value: d.Gossip.CoordinateMinOf, EnvVars: []string{"SHOAL_COORDINATE_MIN_OF"}, Usage: "feed the coordinate the minimum of the last `N` ping RTTs to each peer (1: every RTT as measured)"},
			&cli.IntFlag{Name: "gossip-max-streams-per-source", Value: d.Gossip.MaxStreamsPerSource, EnvVars: []string{"SHOAL_GOSSIP_MAX_STREAMS_PER_SOURCE"}, Usage: "open inbound gossip TCP streams at most from one IP address, `N`"},
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"SHOAL_LOG_LEVEL"}, Usage: "debug, info, warn or error"},
			&cli.BoolFlag{Name: "log-json", EnvVars: []string{"SHOAL_LOG_JSON"}, Usage: "log JSON lines instead of text"},
		},
		Action: runAgent,
	}
}

// agentSettings builds the agent's settings: the defaults, then the
// --config file, then every flag set on the command line or through its
// SHOAL_* variable. Errors name the file line or the flag.
func agentSettings(c *cli.Context) (agentconfig.Agent, error) {
	a := agentconfig.Default()
	if c.NArg() > 0 {
		return a, usagef(c, "agent takes no arguments, got %q", c.Args().Slice())
	}
	if path := c.String("config"); path != "" {
		f, err := agentconfig.Load(path)
		if err != nil {
			return a, usagef(c, "%v", err)
		}
		if err := a.ApplyFile(f); err != nil {
			return a, usagef(c, "%v", err)
		}
	}
	for _, k := range agentconfig.Keys() {
		if !c.IsSet(k.Flag) {
			continue
		}
		var v agentconfig.Value
		switch k.Kind {
		case agentconfig.String, agentconfig.Size:
			v.Str = c.String(k.Flag)
		case agentconfig.Int:
			v.Int = c.Int(k.Flag)
		case agentconfig.Bool:
			v.Bool = c.Bool(k.Flag)
		case agentconfig.Duration:
			v.Dur = c.Duration(k.Flag)
		case agentconfig.List:
			v.Strs = c.StringSlice(k.Flag)
		}
		if err := a.SetFlag(k.Flag, v); err != nil {
			return a, usagef(c, "%v", err)
		}
	}
	cfg := &a.Config
	if cfg.Name == "" {
		h, err := os.Hostname()
		if err != nil {
			return a, usagef(c, "no name and no hostname: set name in the config file or pass --name: %v", err)
		}
		cfg.Name = h
	}
	if a.TokenFile != "" {
		tok, err := agent.ReadTokenFile(a.TokenFile)
		if err == nil {
			err = agent.CheckToken(tok)
		}
		if err != nil {
			return a, usagef(c, "%s: %v", a.Where("token-file"), err)
		}
		cfg.Token = tok
	}
	if err := a.Validate(); err != nil {
		return a, usagef(c, "%v", err)
	}
	if cfg.Bin == "" {
		var err error
		if cfg.Bin, err = os.Executable(); err != nil {
			return a, cli.Exit(fmt.Sprintf("find this executable to start probes from: %v", err), exitFailure)
		}
	}
	return a, nil
}

// newLogger logs to stderr at a level a SIGHUP may change.
func newLogger(c *cli.Context, json bool, level *slog.LevelVar) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if json {
		return slog.New(slog.NewJSONHandler(c.App.ErrWriter, opts))
	}
	return slog.New(slog.NewTextHandler(c.App.ErrWriter, opts))
}

// reload is SIGHUP: it reads the config file and the flags again and
// applies what can change without a restart: the log level here, the job
// and history retention and the probe settings (intervals, budget, test
// size and timeout) in the agent (agent.Reload). It logs every other setting that differs
// from what the agent started with as needing a restart. A bad file
// changes nothing.
func reload(c *cli.Context, running agentconfig.Agent, level *slog.LevelVar, ag *agent.Agent, log *slog.Logger) {
	next, err := agentSettings(c)
	if err != nil {
		log.Error("SIGHUP: config not reloaded; the agent keeps its settings", "err", err.Error())
		return
	}
	live, err := ag.Reload(next.Config.Reloadable())
	if err != nil {
		log.Error("SIGHUP: config not reloaded; the agent keeps its settings", "err", err.Error())
		return
	}
	var applied []string
	if next.LogLevel != level.Level() {
		applied = append(applied, fmt.Sprintf("log_level %v -> %v", level.Level(), next.LogLevel))
		level.Set(next.LogLevel)
	}
	applied = append(applied, live...)
	restart := slices.DeleteFunc(running.Changed(&next), reloadable)
	log.Info("SIGHUP: config reloaded", "changed", applied, "needs_restart", restart)
}

func runAgent(c *cli.Context) error {
	a, err := agentSettings(c)
	if err != nil {
		return err
	}
	if c.Bool("validate") {
		what := "the flags"
		if p := c.String("config"); p != "" {
			what = p
		}
		fmt.Fprintf(c.App.Writer, "%s: valid\n", what)
		return nil
	}
	// SIGHUP reloads the config; registered first, so that an early one
	// does not end the agent (its default action).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg := a.Config
	level := new(slog.LevelVar)
	level.Set(a.LogLevel)
	log := newLogger(c, a.LogJSON, level)
	cfg.Logger = log
	ag, err := agent.New(cfg)
	if err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	// SIGUSR2 is a restart: registered before the agent starts, so that
	// an early one does not end the agent (its default action) with its jobs.
	restart := make(chan os.Signal, 1)
	signal.Notify(restart, syscall.SIGUSR2)
	defer signal.Stop(restart)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := ag.Start(ctx); err != nil {
		ag.Shutdown(agent.Abrupt)
		return cli.Exit(err.Error(), exitFailure)
	}
	if jt := a.JoinTimeout; jt > 0 && len(cfg.Join) > 0 {
		deadline := time.After(jt)
		for ag.Gossip().NumAlive() < 2 {
			select {
			case <-ctx.Done():
			case <-deadline:
				ag.Shutdown(agent.Abrupt)
				return cli.Exit(fmt.Sprintf("could not join any of %v within %v: are the agents up and the token the same?", cfg.Join, jt), exitFailure)
			case <-time.After(100 * time.Millisecond):
				continue
			}
			break
		}
	}
	// alive takes the replicated state's lock: an agent wedged on it stops
	// feeding systemd's watchdog, which restarts it.
	go notifySystemd(ctx, ag.Ready, func() { ag.FSM().Index() }, log)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-hup:
			reload(c, a, level, ag, log)
		case <-restart:
			log.Info("SIGUSR2: stopping for a restart; supervised jobs keep running")
			if err := ag.ShutdownForRestart(); err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			return nil
		}
	}
	log.Info("signal received, leaving the cluster")
	if err := ag.Shutdown(agent.Graceful); err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	return nil
}
