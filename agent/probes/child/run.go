package child

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/tlsca"
)

// Run is the body of a probe process (`shoal probe KIND`): it reads
// its configuration and orders from in and writes heartbeats and
// measurements to out, as described on Msg, until in closes or ctx
// ends. sampler is the nodestate probe's source (nil: the host). The
// agent runs the same function in-process when it has no binary to exec.
func Run(ctx context.Context, kind string, in io.Reader, out io.Writer, sampler probe.Sampler, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	msgs := make(chan Msg, 16)
	readErr := make(chan error, 1)
	go func() {
		readErr <- ReadLines(in, func(m Msg) {
			select {
			case msgs <- m:
			case <-ctx.Done():
			}
		})
		close(msgs)
	}()
	var cfg Msg
	select {
	case <-ctx.Done():
		return ctx.Err()
	case m, ok := <-msgs:
		if !ok {
			return fmt.Errorf("probe %s: no configuration on stdin: %w", kind, errors.Join(<-readErr, io.ErrUnexpectedEOF))
		}
		if m.Type != TypeConfig || m.Kind != kind {
			return fmt.Errorf("probe %s: first message is %q for %q, want config for %q", kind, m.Type, m.Kind, kind)
		}
		cfg = m
	}
	w := NewWriter(out)
	beat := time.NewTicker(time.Duration(max(cfg.BeatMS, 10)) * time.Millisecond)
	defer beat.Stop()
	if err := w.Send(Msg{Type: TypeBeat}); err != nil {
		return err
	}
	var work *time.Ticker // the kind's own period; nil for bandwidth
	var watch *traffic    // nodestate: samples early when the traffic shifts
	var busy atomic.Bool  // one measurement at a time
	var peers []Peer
	var pinger *probe.Pinger
	var probeTLS *tls.Config // bandwidth: verifies the peers' probe servers
	switch kind {
	case "nodestate":
		if sampler == nil {
			sampler = probe.NewHostSampler()
		}
		work = time.NewTicker(period(kind, cfg))
		defer work.Stop()
		if tc, ok := sampler.(probe.TrafficCounter); ok {
			watch = &traffic{c: tc, tick: time.NewTicker(watchPeriod(period(kind, cfg)))}
			watch.w.MinGap, watch.w.MinSpan = minGap(period(kind, cfg)), watchPeriod(period(kind, cfg))/2
			watch.w.Burst = watchBurst
			defer watch.tick.Stop()
		}
		if sampleOnce(ctx, sampler, w, log, nil) {
			watch.sampled(ctx)
		}
	case "latency":
		work = time.NewTicker(period(kind, cfg))
		defer work.Stop()
		p, err := probe.NewPinger(cfg.Key)
		if err != nil {
			return err
		}
		defer p.Close()
		pinger = p
	case "bandwidth":
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CA) {
			return fmt.Errorf("probe %s: no CA certificate in the configuration", kind)
		}
		probeTLS = tlsca.ClientConfig(pool, nil, tlsca.AgentServerName)
	default:
		return fmt.Errorf("no probe kind %q; want nodestate, latency or bandwidth", kind)
	}
	var workC, watchC <-chan time.Time
	if work != nil {
		workC = work.C
	}
	if watch != nil {
		watchC = watch.tick.C
	}
	pingAll := func() {
		if len(peers) == 0 || !busy.CompareAndSwap(false, true) {
			return
		}
		ps := peers
		go func() {
			defer busy.Store(false)
			var rtts []PeerRTT
			for _, p := range ps {
				got, err := pinger.Ping(p.Addr, 3, 500*time.Millisecond)
				if err != nil {
					log.Debug("ping", "peer", p.Name, "err", err)
					continue
				}
				rtts = append(rtts, PeerRTT{Peer: p.Name, US: max(probe.MedianRTT(got).Microseconds(), 1)})
			}
			if len(rtts) > 0 {
				_ = w.Send(Msg{Type: TypeRTT, RTTs: rtts})
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-beat.C:
			if err := w.Send(Msg{Type: TypeBeat}); err != nil {
				return err
			}
		case <-workC:
			switch kind {
			case "nodestate":
				if sampleOnce(ctx, sampler, w, log, nil) {
					watch.sampled(ctx)
				}
			case "latency":
				pingAll()
			}
		case <-watchC:
			if watch.shifted(ctx) {
				// A failed sample published nothing: the watch keeps
				// comparing with what the last one did.
				if sampleOnce(ctx, sampler, w, log, watch.recent) {
					watch.sampledRecent(ctx)
				}
				work.Reset(period(kind, cfg))
			}
		case m, ok := <-msgs:
			if !ok {
				return nil // the agent closed our stdin: it is going away
			}
			switch {
			case m.Type == TypeConfig && m.Kind == kind:
				// New settings from a SIGHUP: the periods and the test
				// timeout change from the next tick and test on.
				cfg.BeatMS, cfg.SampleMS, cfg.LatencyMS, cfg.TimeoutMS = m.BeatMS, m.SampleMS, m.LatencyMS, m.TimeoutMS
				beat.Reset(time.Duration(max(cfg.BeatMS, 10)) * time.Millisecond)
				if work != nil {
					work.Reset(period(kind, cfg))
				}
				if watch != nil {
					watch.tick.Reset(watchPeriod(period(kind, cfg)))
					watch.w.MinGap, watch.w.MinSpan = minGap(period(kind, cfg)), watchPeriod(period(kind, cfg))/2
				}
				log.Info("probe settings changed", "beat_ms", cfg.BeatMS, "period", period(kind, cfg),
					"timeout_ms", cfg.TimeoutMS)
			case m.Type == TypePeers && kind == "latency":
				first := len(peers) == 0
				peers = m.Peers
				if first {
					pingAll()
				}
			case m.Type == TypeTest && kind == "bandwidth":
				if !busy.CompareAndSwap(false, true) {
					_ = w.Send(Msg{Type: TypeBW, ID: m.ID, Peer: m.Peer, Err: "a test is already running"})
					continue
				}
				// Both directions in one test, each with half the bytes
				// and half the time: the test costs what a one-way test
				// did, so the budget and the round length hold.
				timeout := time.Duration(cfg.TimeoutMS) * time.Millisecond / 2
				test := probe.BandwidthTestBoth
				if m.Check {
					test = probe.BandwidthCheck
					if m.TimeoutMS > 0 {
						timeout = time.Duration(m.TimeoutMS) * time.Millisecond
					}
				}
				go func() {
					defer busy.Store(false)
					r, err := test(ctx, m.Addr, cfg.Key, cfg.Node, max(m.Bytes/2, 1), timeout, probeTLS, probe.InterfaceCounters)
					res := Msg{Type: TypeBW, ID: m.ID, Peer: m.Peer, Bytes: r.Bytes, NS: int64(r.Elapsed),
						RevBytes: r.RevBytes, RevNS: int64(r.RevElapsed), Carried: r.Carried, RevCarried: r.RevCarried, Check: m.Check}
					if err != nil {
						res.Err = err.Error()
					}
					_ = w.Send(res)
				}()
			}
		}
	}
}

// period is how often a nodestate or latency probe measures.
func period(kind string, cfg Msg) time.Duration {
	if kind == "latency" {
		return time.Duration(max(cfg.LatencyMS, 100)) * time.Millisecond
	}
	return time.Duration(max(cfg.SampleMS, 10)) * time.Millisecond
}

// watchPeriod is how often the nodestate probe reads its traffic
// counters between samples: a fifteenth of the sample period, from 50 ms
// to 200 ms (200 ms at the default 3 s). Traffic that stops leaves the
// published rates within two readings (probe.TrafficWatch). A read of
// the interface counters costs about 0.2 ms of CPU
// (BenchmarkHostSampler_Traffic): 0.1 % of a core at five reads a second.
func watchPeriod(sample time.Duration) time.Duration {
	return min(max(sample/15, 50*time.Millisecond), 200*time.Millisecond)
}

// minGap is the least time between samples the traffic watch calls for:
// a third of the sample period, at most 1 s, so that bursty traffic
// gossips at most one extra state update a second.
func minGap(sample time.Duration) time.Duration {
	return min(sample/3, time.Second)
}

// watchBurst is how many samples the traffic watch may call for in a
// row (probe.TrafficWatch.Burst): two, so that a flow ending within a
// second of a sample the watch called for (its start's, or a rate that
// wavered) is sampled at once, while bursty traffic still gossips at
// most one extra state update a second on average.
const watchBurst = 2

// traffic watches the node's traffic counters between samples
// (probe.TrafficWatch); a nil *traffic watches nothing.
type traffic struct {
	c    probe.TrafficCounter
	tick *time.Ticker
	w    probe.TrafficWatch
}

// sampled records the counters right after a full sample.
func (t *traffic) sampled(ctx context.Context) {
	if t == nil {
		return
	}
	if rx, tx, err := t.c.Traffic(ctx); err == nil {
		t.w.Sampled(time.Now(), rx, tx)
	}
}

// sampledRecent records the counters right after a full sample that
// published the rates of the reading that called for it.
func (t *traffic) sampledRecent(ctx context.Context) {
	if rx, tx, err := t.c.Traffic(ctx); err == nil {
		t.w.SampledRecent(time.Now(), rx, tx)
	}
}

// recent sets raw's recent rates to those of the latest reading: what is
// on the link now, which the shift it showed made the sample's reason.
func (t *traffic) recent(raw *probe.RawSample) {
	raw.RecentRx, raw.RecentTx, raw.RecentSpan = t.w.Recent()
}

// shifted reads the counters and reports whether a sample is due now.
func (t *traffic) shifted(ctx context.Context) bool {
	rx, tx, err := t.c.Traffic(ctx)
	return err == nil && t.w.Check(time.Now(), rx, tx)
}

// sampleOnce takes a sample, completes it with with (when not nil) and
// sends it; it reports whether the sample went out.
func sampleOnce(ctx context.Context, s probe.Sampler, w *Writer, log *slog.Logger, with func(*probe.RawSample)) bool {
	raw, err := s.Sample(ctx)
	if err != nil {
		log.Warn("sample node state", "err", err)
		return false
	}
	if with != nil {
		with(&raw)
	}
	return w.Send(Msg{Type: TypeSample, Sample: &raw}) == nil
}
