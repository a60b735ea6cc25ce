package agentconfig

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/probe"
)

// Kind is the type of value a key takes.
type Kind int

const (
	String   Kind = iota // "text"
	Int                  // a whole number
	Bool                 // true or false
	Duration             // "3s", "5m", "24h"
	Size                 // "4MiB", "500KB", or a number of bytes
	List                 // ["a", "b"]: a repeatable flag
)

func (k Kind) String() string {
	return [...]string{"a string", "a whole number", "true or false", `a duration such as "3s" or "5m"`,
		`a size such as "4MiB" or a number of bytes`, `a list of strings such as ["a", "b"]`}[k]
}

// Value is one setting's value; the field its key's Kind names is set.
type Value struct {
	Str  string        // String, Size
	Int  int           // Int
	Bool bool          // Bool
	Dur  time.Duration // Duration
	Strs []string      // List
}

// Key is one setting: the flag --Flag and the file key Name().
type Key struct {
	Flag string
	Kind Kind
	set  func(a *Agent, v Value) error
}

// Name is the key in a config file: the flag with underscores.
func (k Key) Name() string { return strings.ReplaceAll(k.Flag, "-", "_") }

// Keys lists every setting, in the order `shoal agent --help` shows them.
func Keys() []Key { return append([]Key(nil), keys...) }

// Lookup finds a key by flag ("data-dir") or file key ("data_dir").
func Lookup(name string) (Key, bool) {
	name = strings.ReplaceAll(name, "_", "-")
	for _, k := range keys {
		if k.Flag == name {
			return k, true
		}
	}
	return Key{}, false
}

func ip(dst *string) func(*Agent, Value) error {
	return func(_ *Agent, v Value) error {
		if net.ParseIP(v.Str) == nil {
			return fmt.Errorf("%q is not an IP address", v.Str)
		}
		*dst = v.Str
		return nil
	}
}

var keys = []Key{
	{"name", String, func(a *Agent, v Value) error {
		if v.Str == "" {
			return fmt.Errorf("empty; leave it out to use the hostname")
		}
		a.Config.Name = v.Str
		return nil
	}},
	{"bind", String, func(a *Agent, v Value) error { return ip(&a.Config.BindAddr)(a, v) }},
	{"advertise", String, func(a *Agent, v Value) error {
		if v.Str == "" {
			a.Config.AdvertiseAddr = ""
			return nil
		}
		return ip(&a.Config.AdvertiseAddr)(a, v)
	}},
	{"gossip-port", Int, func(a *Agent, v Value) error { a.Config.GossipPort = v.Int; return nil }},
	{"raft-port", Int, func(a *Agent, v Value) error { a.Config.RaftPort = v.Int; return nil }},
	{"http-port", Int, func(a *Agent, v Value) error { a.Config.HTTPPort = v.Int; return nil }},
	{"join", List, func(a *Agent, v Value) error {
		for _, j := range v.Strs {
			if err := CheckJoinAddr(j); err != nil {
				return fmt.Errorf("%q: %w", j, err)
			}
		}
		a.Config.Join = append([]string(nil), v.Strs...)
		return nil
	}},
	{"data-dir", String, func(a *Agent, v Value) error { a.Config.DataDir = v.Str; return nil }},
	{"token-file", String, func(a *Agent, v Value) error { a.TokenFile = v.Str; return nil }},
	{"tls-ca-file", String, func(a *Agent, v Value) error { a.Config.TLS.CAFile = v.Str; return nil }},
	{"tls-cert-file", String, func(a *Agent, v Value) error { a.Config.TLS.CertFile = v.Str; return nil }},
	{"tls-key-file", String, func(a *Agent, v Value) error { a.Config.TLS.KeyFile = v.Str; return nil }},
	{"socket", String, func(a *Agent, v Value) error { a.Config.Socket = v.Str; return nil }},
	{"sample-interval", Duration, func(a *Agent, v Value) error { a.Config.SampleInterval = v.Dur; return nil }},
	{"pe", List, func(a *Agent, v Value) error {
		pes, err := probe.ParsePEFlags(v.Strs)
		if err != nil {
			return err
		}
		a.Config.PEs = pes
		return nil
	}},
	{"switch", String, func(a *Agent, v Value) error { a.Config.Switch = v.Str; return nil }},
	{"feature", List, func(a *Agent, v Value) error { a.Config.Features = v.Strs; return nil }},
	{"bootstrap-expect", Int, func(a *Agent, v Value) error { a.Config.BootstrapExpect = v.Int; return nil }},
	{"voters", Int, func(a *Agent, v Value) error { a.Config.Voters = v.Int; return nil }},
	{"servers", Int, func(a *Agent, v Value) error { a.Config.Servers = v.Int; return nil }},
	{"job-rlimit", List, func(a *Agent, v Value) error {
		var rs []jobexec.Rlimit
		for _, s := range v.Strs {
			r, err := jobexec.ParseRlimit(s)
			if err != nil {
				return err
			}
			rs = append(rs, r)
		}
		a.Config.JobLimits = rs
		return nil
	}},
	{"cgroups", Bool, func(a *Agent, v Value) error { a.Config.NoCgroups = !v.Bool; return nil }},
	{"publish-output", Bool, func(a *Agent, v Value) error { a.Config.PublishOutput = v.Bool; return nil }},
	{"placement-model-wait", Duration, func(a *Agent, v Value) error { a.Config.PlacementModelWait = v.Dur; return nil }},
	{"job-retention", Duration, func(a *Agent, v Value) error { a.Config.JobRetention = v.Dur; return nil }},
	{"history-retention", Duration, func(a *Agent, v Value) error { a.Config.HistoryRetention = v.Dur; return nil }},
	{"max-queued-jobs", Int, func(a *Agent, v Value) error { a.Config.Limits.QueuedJobs = v.Int; return nil }},
	{"max-user-procs", Int, func(a *Agent, v Value) error { a.Config.Limits.Procs = v.Int; return nil }},
	{"max-spec-bytes", Int, func(a *Agent, v Value) error { a.Config.Limits.SpecBytes = v.Int; return nil }},
	{"max-argv", Int, func(a *Agent, v Value) error { a.Config.Limits.Argv = v.Int; return nil }},
	{"max-env", Int, func(a *Agent, v Value) error { a.Config.Limits.Env = v.Int; return nil }},
	{"max-finished-jobs", Int, func(a *Agent, v Value) error { a.Config.Limits.FinishedJobs = v.Int; return nil }},
	{"fence-lease", Duration, func(a *Agent, v Value) error { a.Config.Fence.Lease = v.Dur; return nil }},
	{"dead-voter-grace", Duration, func(a *Agent, v Value) error { a.Config.DeadVoterGrace = v.Dur; return nil }},
	{"join-timeout", Duration, func(a *Agent, v Value) error {
		if v.Dur < 0 {
			return fmt.Errorf("%v is negative; use 0 to keep trying", v.Dur)
		}
		a.JoinTimeout = v.Dur
		return nil
	}},
	{"probe-port", Int, func(a *Agent, v Value) error { a.Config.Probes.Port = v.Int; return nil }},
	{"latency-interval", Duration, func(a *Agent, v Value) error { a.Config.Probes.LatencyInterval = v.Dur; return nil }},
	{"bandwidth-interval", Duration, func(a *Agent, v Value) error { a.Config.Probes.BandwidthInterval = v.Dur; return nil }},
	{"bandwidth-bytes", Size, func(a *Agent, v Value) error { return size(&a.Config.Probes.BandwidthBytes, v) }},
	{"bandwidth-timeout", Duration, func(a *Agent, v Value) error { a.Config.Probes.BandwidthTimeout = v.Dur; return nil }},
	{"probe-budget", Size, func(a *Agent, v Value) error { return size(&a.Config.Probes.Budget, v) }},
	{"link-check-interval", Duration, func(a *Agent, v Value) error { a.Config.Probes.LinkCheck.Interval = v.Dur; return nil }},
	{"link-check-bytes", Size, func(a *Agent, v Value) error { return size(&a.Config.Probes.LinkCheck.Bytes, v) }},
	{"latency-peers", Int, func(a *Agent, v Value) error { a.Config.Probes.LatencyPeers = v.Int; return nil }},
	{"topo-own-offsets", Int, func(a *Agent, v Value) error { a.Config.Probes.Topo.OwnOffsets = v.Int; return nil }},
	{"topo-pair-tests", Int, func(a *Agent, v Value) error { a.Config.Probes.Topo.PairTests = v.Int; return nil }},
	{"topo-cross-per-switch", Int, func(a *Agent, v Value) error { a.Config.Probes.Topo.CrossPerSwitch = v.Int; return nil }},
	{"topo-cross-per-node", Int, func(a *Agent, v Value) error { a.Config.Probes.Topo.CrossPerNode = v.Int; return nil }},
	{"topo-uncertain-per-node", Int, func(a *Agent, v Value) error { a.Config.Probes.Topo.UncertainPerNode = v.Int; return nil }},
	{"topo-explore-per-node", Int, func(a *Agent, v Value) error { a.Config.Probes.Topo.ExplorePerNode = v.Int; return nil }},
	{"topo-small-cluster", Int, func(a *Agent, v Value) error { a.Config.Probes.Topo.SmallCluster = v.Int; return nil }},
	{"netrow-min-interval", Duration, func(a *Agent, v Value) error { a.Config.Rows.MinInterval = v.Dur; return nil }},
	{"netrow-refresh", Duration, func(a *Agent, v Value) error { a.Config.Rows.Refresh = v.Dur; return nil }},
	{"netrow-send-timeout", Duration, func(a *Agent, v Value) error { a.Config.Rows.SendTimeout = v.Dur; return nil }},
	{"http-max-conns", Int, func(a *Agent, v Value) error { a.Config.HTTP.MaxConns = v.Int; return nil }},
	{"http-max-conns-per-source", Int, func(a *Agent, v Value) error { a.Config.HTTP.MaxConnsPerSource = v.Int; return nil }},
	{"http-max-conns-per-user", Int, func(a *Agent, v Value) error { a.Config.HTTP.MaxConnsPerUser = v.Int; return nil }},
	{"http-idle-timeout", Duration, func(a *Agent, v Value) error { a.Config.HTTP.IdleTimeout = v.Dur; return nil }},
	{"http-request-timeout", Duration, func(a *Agent, v Value) error { a.Config.HTTP.RequestTimeout = v.Dur; return nil }},
	{"gossip-max-streams", Int, func(a *Agent, v Value) error { a.Config.Gossip.MaxInboundStreams = v.Int; return nil }},
	{"coordinates", Bool, func(a *Agent, v Value) error { a.Config.Gossip.Coordinates = v.Bool; return nil }},
	{"coordinate-min-of", Int, func(a *Agent, v Value) error { a.Config.Gossip.CoordinateMinOf = v.Int; return nil }},
	{"gossip-max-streams-per-source", Int, func(a *Agent, v Value) error { a.Config.Gossip.MaxStreamsPerSource = v.Int; return nil }},
	{"log-level", String, func(a *Agent, v Value) error {
		var l slog.Level
		if err := l.UnmarshalText([]byte(v.Str)); err != nil {
			return fmt.Errorf("%q: use debug, info, warn or error", v.Str)
		}
		a.LogLevel = l
		return nil
	}},
	{"log-json", Bool, func(a *Agent, v Value) error { a.LogJSON = v.Bool; return nil }},
}

func size(dst *uint64, v Value) error {
	n, err := ParseSize(v.Str)
	if err != nil {
		return err
	}
	*dst = n
	return nil
}
