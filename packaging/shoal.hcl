# /etc/shoal/shoal.hcl: settings of the shoal agent (shoal.service).
#
# Every flag of 'shoal agent' is a key here, spelt with underscores
# (--data-dir is data_dir); a flag on the command line overrides the file.
# Check the file with: shoal agent --config /etc/shoal/shoal.hcl --validate
# 'systemctl reload shoal' applies a new log_level, job_retention,
# history_retention and probe settings (latency_interval, bandwidth_*,
# probe_budget) at once; the agent logs which other changes need
# 'systemctl restart shoal'.
# All keys are described in shoal.hcl(5) and 'shoal agent --help'.
#
# Before starting the service, create the cluster token (the same file on
# every node) and list a few other nodes to join:
#   shoal keygen > /etc/shoal/token && chmod 600 /etc/shoal/token
#   systemctl enable --now shoal
# The service does not start while /etc/shoal/token is missing.

# Where raft keeps its log and snapshots. The package creates it, mode 0700.
data_dir = "/var/lib/shoal"

# The cluster secret; readable by root only.
token_file = "/etc/shoal/token"

# Local users reach the API on this Unix socket as themselves, without the
# token: export SHOAL_ADDR=unix:///run/shoal/shoal.sock ("none": no socket).
# systemd creates /run/shoal; the data dir (0700) would hide the socket.
socket = "/run/shoal/shoal.sock"

# Agents to join: "host" or "host:gossip_port"; retried with backoff.
# join = ["node1", "node2", "node3"]

# Raft bootstraps once this many agents see each other (1: a single node);
# voters is the target number of raft voters (default: bootstrap_expect);
# servers the target number of raft servers, voters included (default 5):
# every other agent is a client that follows the state from a server.
# bootstrap_expect = 3
# voters = 5
# servers = 5

# Node name (default: the hostname) and addresses.
# name = "node1"
# bind = "0.0.0.0"
# advertise = "10.0.0.11"

# Ports: gossip (TCP+UDP), raft, HTTP API, probes (TCP+UDP).
# gossip_port = 7946
# raft_port = 7947
# http_port = 7948
# probe_port = 7949


# Site TLS files instead of the CA derived from the token.
# tls_ca_file = "/etc/shoal/ca.pem"
# tls_cert_file = "/etc/shoal/agent.pem"
# tls_key_file = "/etc/shoal/agent-key.pem"

# Processing elements shoal cannot detect, and the switch this node is on.
# pe = ["fpga=2"]
# switch = "rack1"
# What this node offers, for jobs that select with --constraint (ib&avx512).
# feature = ["ib", "avx512"]

# Node sampling and network probes.
# sample_interval = "3s"
# latency_interval = "1m"
# bandwidth_interval = "5m"
# bandwidth_bytes = "4MiB"
# bandwidth_timeout = "5s"
# probe_budget = "1GiB"
# A short test of this node's own link to one quiet peer, this often and of
# this size (both directions together), so that a link whose rate changed
# has its pairs tested again within seconds instead of at the next bandwidth
# cycle; 360 MiB an hour of probe_budget at these values ("0s": no checks).
# link_check_interval = "10s"
# link_check_bytes = "512KiB"
# Peers the latency probe pings (its own switch's first; coordinates estimate the rest).
# latency_peers = 16

# The leader's bandwidth planner, per cycle: ring offsets of a node's own
# switch, tests per switch pair, cross-switch tests per uplink and per node,
# direct tests of doubtful pairs and of nodes of unknown switch per node;
# every pair is tested in a cluster of at most topo_small_cluster members
# (0: when each node can test every other within those caps; -1: never).
# topo_own_offsets = 1
# topo_pair_tests = 1
# topo_cross_per_switch = 16
# topo_cross_per_node = 2
# topo_uncertain_per_node = 1
# topo_explore_per_node = 4
# topo_small_cluster = 0

# This node's network row goes to the servers at most this often when it
# changes, and this often even unchanged; each send bounded by the timeout.
# netrow_min_interval = "1s"
# netrow_refresh = "1m"
# netrow_send_timeout = "10s"

# Jobs: resource limits every job starts with, retention of finished jobs.
# job_rlimit = ["nofile=4096", "memlock=unlimited"]
# job_retention = "24h"
# Records of purged jobs for 'shoal history' (like Slurm's sacct), the newest 10000 at most.
# history_retention = "720h"

# Confine every job attempt in a cgroup of its own (false: unconfined, --mem jobs refused).
# cgroups = true

# Let every local user read every job's output with 'shoal logs' (default: only
# the job's owner, root and token holders). Give every agent the same.
# publish_output = false

# Per-user limits, cluster-wide (0: no limit).
# max_queued_jobs = 100
# max_user_procs = 4096
# max_spec_bytes = 65536
# max_argv = 1024
# max_env = 256
# Finished jobs one user keeps in the state; the oldest beyond leave for `shoal history`.
# max_finished_jobs = 100

# How long a job of a network-aware policy (netload, paper) stays pending, and `shoal alloc`
# waits, for the network model to cover the nodes (right after a cluster forms); 0: at once.
# placement_model_wait = "45s"

# How long this node runs its jobs' processes without word from the raft
# leader before a guard process freezes them; the leader retries a lost
# node's jobs only after this lease, 5% and one second more. 0: no fencing.
# fence_lease = "4s"

# Raft membership.
# dead_voter_grace = "2s"
# join_timeout = "0s"

# API and gossip connection bounds.
# http_max_conns = 4096
# http_max_conns_per_source = 256
# http_max_conns_per_user = 256
# http_idle_timeout = "1m"
# http_request_timeout = "30s"
# gossip_max_streams = 128
# gossip_max_streams_per_source = 16

# Vivaldi network coordinates from gossip's pings ('shoal rtt', rtt_est_ms in
# 'shoal net --json'); false leaves them out of acks and node state.
# coordinates = true
# Each coordinate update takes the minimum of the last N ping RTTs to that
# peer (1: every RTT as measured).
# coordinate_min_of = 1

# Logging (to the journal): debug, info, warn or error; JSON lines.
# log_level = "info"
# log_json = false
