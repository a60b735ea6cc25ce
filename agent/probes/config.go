package probes

import (
	"fmt"
	"time"

	"github.com/shoal-hpc/shoal/probeplan"
)

// Config tunes the network probes and their supervision.
type Config struct {
	// Port is the probe server's TCP (bandwidth) and UDP (latency echo)
	// port; 0 picks a free one, which tests use. Default 7949 (--probe-port).
	Port int
	// LatencyInterval is how often the latency probe pings its peers.
	// Default 60s (--latency-interval), as in seed 002 §4.
	LatencyInterval time.Duration
	// LatencyPeers bounds the peers the latency probe pings, so its
	// traffic does not grow with the cluster:
	// its own switch's first, then peers with an uncertain Vivaldi
	// coordinate, then others; coordinates give every other pair's RTT.
	// 0 means DefaultLatencyPeers (16); a cluster that small pings all.
	LatencyPeers int
	// BandwidthInterval is how often a bandwidth cycle starts. Default 5m
	// (--bandwidth-interval).
	BandwidthInterval time.Duration
	// BandwidthBytes is the size of one bandwidth test, both directions
	// together (half each way), and the most this node's server accepts
	// in one direction. Default 4 MiB (--bandwidth-bytes).
	BandwidthBytes uint64
	// BandwidthTimeout bounds one test's transfer; a slower link reports
	// the rate of what arrived. Default 5s (--bandwidth-timeout).
	BandwidthTimeout time.Duration
	// Budget is each node's bandwidth-test traffic cap in bytes per hour,
	// sent plus received; 0 means no cap. Default 1 GiB (--probe-budget).
	Budget uint64
	// BeatInterval is how often a probe process reports a heartbeat, and
	// how often the agent gossips its probes' beats. Default 2s.
	BeatInterval time.Duration
	// Supervise tunes the leader's relaunch decisions (stale threshold,
	// backoff).
	Supervise probeplan.SuperviseConfig
	// InProcess runs the probes as goroutines of the agent instead of
	// `shoal probe KIND` processes. Tests that do not exercise process
	// supervision set it: a parallel test suite on two cores cannot afford
	// three extra processes per in-process agent.
	InProcess bool
	// RoundSlack is added to BandwidthTimeout to make a round's length:
	// the room left for setup and clock skew between nodes. Default 1s.
	RoundSlack time.Duration
	// Topo bounds the tests the leader's topology planner gives each node
	// and switch per bandwidth cycle (--topo-* flags); the leader reads
	// it. The zero value is probeplan.DefaultTopoConfig.
	Topo probeplan.TopoConfig
	// LinkCheck is the node's check of its own link between bandwidth
	// cycles (--link-check-interval, --link-check-bytes): a short test
	// to one quiet peer every Interval, whose reading against the pair's
	// latest test tells the leader the link changed. Its traffic comes
	// off Budget. The zero value (a Config built by hand) is off;
	// DefaultConfig's checks every 10s.
	LinkCheck probeplan.LinkCheckConfig
}

// maxLatencyPeers bounds Config.LatencyPeers: beyond it the probe's pings
// are an all-pairs sweep again.
const maxLatencyPeers = 4096

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	b := probeplan.DefaultBudgetConfig()
	return Config{
		Port:              7949,
		LatencyInterval:   time.Minute,
		LatencyPeers:      DefaultLatencyPeers,
		BandwidthInterval: b.CycleInterval,
		BandwidthBytes:    b.TestBytes,
		BandwidthTimeout:  5 * time.Second,
		Budget:            b.BytesPerHour,
		BeatInterval:      2 * time.Second,
		Supervise:         probeplan.DefaultSuperviseConfig(),
		RoundSlack:        time.Second,
		Topo:              probeplan.DefaultTopoConfig(),
		LinkCheck:         probeplan.DefaultLinkCheckConfig(),
	}
}

// Tuning is the part of Config a running node takes on without a restart
// (Manager.Retune, on SIGHUP): the probes' periods and test size and
// timeout. The leader's share (BandwidthInterval, Budget) is read at
// every leader round and needs no manager.
type Tuning struct {
	LatencyInterval  time.Duration
	BandwidthBytes   uint64
	BandwidthTimeout time.Duration
}

// Tuning returns c's tuning.
func (c Config) Tuning() Tuning {
	return Tuning{LatencyInterval: c.LatencyInterval, BandwidthBytes: c.BandwidthBytes, BandwidthTimeout: c.BandwidthTimeout}
}

// WithTuning returns c with t's settings.
func (c Config) WithTuning(t Tuning) Config {
	c.LatencyInterval, c.BandwidthBytes, c.BandwidthTimeout = t.LatencyInterval, t.BandwidthBytes, t.BandwidthTimeout
	return c
}

// BudgetConfig is the bandwidth schedule's view of these settings.
func (c Config) BudgetConfig() probeplan.BudgetConfig {
	return probeplan.BudgetConfig{BytesPerHour: c.Budget, TestBytes: c.BandwidthBytes, CycleInterval: c.BandwidthInterval,
		CheckBytesPerHour: c.LinkChecks().BytesPerHour()}
}

// LinkChecks is the link check as it runs: LinkCheck fitted to the probe
// budget (probeplan.LinkCheckConfig.FitTo), less often or off when the
// budget is small.
func (c Config) LinkChecks() probeplan.LinkCheckConfig {
	return c.LinkCheck.FitTo(probeplan.BudgetConfig{BytesPerHour: c.Budget, TestBytes: c.BandwidthBytes, CycleInterval: c.BandwidthInterval})
}

// RoundLen is the time one round of bandwidth tests is given.
func (c Config) RoundLen() time.Duration { return c.BandwidthTimeout + c.RoundSlack }

// OrDefault treats the zero value (a Config built by hand) as the defaults.
func (c Config) OrDefault() Config {
	if c == (Config{}) {
		return DefaultConfig()
	}
	return c
}

// Validate names the first field out of bounds. The zero value stands for
// the defaults.
func (c Config) Validate() error {
	c = c.OrDefault()
	switch {
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("probe port %d is outside 0-65535", c.Port)
	case c.LatencyInterval < 100*time.Millisecond:
		return fmt.Errorf("latency interval %v is below 100ms", c.LatencyInterval)
	case c.BandwidthTimeout < 100*time.Millisecond || c.BandwidthTimeout > 10*time.Minute:
		return fmt.Errorf("bandwidth timeout %v is outside 100ms-10m", c.BandwidthTimeout)
	case c.BeatInterval < 10*time.Millisecond:
		return fmt.Errorf("probe beat interval %v is below 10ms", c.BeatInterval)
	case c.Supervise.StaleAfter < 2*c.BeatInterval:
		return fmt.Errorf("probe stale-after %v must be at least twice the beat interval %v", c.Supervise.StaleAfter, c.BeatInterval)
	case c.Supervise.BackoffBase <= 0 || c.Supervise.BackoffMax < c.Supervise.BackoffBase:
		return fmt.Errorf("probe backoff: need 0 < base (%v) <= max (%v)", c.Supervise.BackoffBase, c.Supervise.BackoffMax)
	case c.LatencyPeers < 0 || c.LatencyPeers > maxLatencyPeers:
		return fmt.Errorf("latency peers %d is outside 0-%d: pass at most %d, or 0 for the default %d", c.LatencyPeers, maxLatencyPeers, maxLatencyPeers, DefaultLatencyPeers)
	case c.RoundSlack < 0:
		return fmt.Errorf("probe round slack %v is negative", c.RoundSlack)
	}
	if err := c.LinkCheck.Validate(); err != nil {
		return fmt.Errorf("%w (--link-check-interval, --link-check-bytes)", err)
	}
	if err := c.BudgetConfig().Validate(); err != nil {
		return fmt.Errorf("%w (--bandwidth-bytes, --bandwidth-interval, --probe-budget, --link-check-interval)", err)
	}
	if c.Topo != (probeplan.TopoConfig{}) {
		if err := c.Topo.Validate(); err != nil {
			return err
		}
	}
	return nil
}
