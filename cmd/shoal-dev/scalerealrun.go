package main

import (
	"context"
	"fmt"
	"os"
	ossignal "os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// runRealScale measures one size on real agents: the figures of runScale,
// where the agents' own code gives them.
func runRealScale(ctx context.Context, o scaleOpts) (scaleResult, error) {
	r := scaleResult{N: o.N, Servers: min(o.Servers, o.N), Mode: "real", LoadStart: loadAvg(), At: time.Now().UTC().Format(time.RFC3339)}
	if o.Servers < 3 {
		return r, fmt.Errorf("-real runs raft as the agent does: -servers %d, want 3 or more", o.Servers)
	}
	var err error
	if r.NoFile, err = raiseNoFile(); err != nil {
		return r, err
	}
	if r.PushPull, r.PushPullRows, r.RowsPerAgent, err = pushPullSizes(o.N); err != nil {
		return r, err
	}
	before := heapAlloc()
	t0 := time.Now()
	cpuJoin := newCPUMeter()
	var cReady atomic.Pointer[scaleCluster]
	stopStatus := make(chan struct{})
	statusDone := make(chan struct{})
	var stage atomic.Value
	stage.Store("joining")
	go func() {
		defer close(statusDone)
		statusLoop(10*time.Second, func() string {
			cc := cReady.Load()
			if cc == nil {
				return stage.Load().(string)
			}
			return fmt.Sprintf("%s: %d of %d agents joined, the fewest alive any agent sees %d, timers %v late, %d state packets owed",
				stage.Load(), cc.joined.Load(), o.N, cc.minAliveJoined(), cc.lag.recent().Round(time.Millisecond), cc.owed.current(&cc.bigPackets))
		}, stopStatus)
	}()
	endStatus := func() {
		if stopStatus != nil {
			close(stopStatus)
			<-statusDone
			stopStatus = nil
		}
	}
	defer endStatus()
	// A size stopped by its deadline or by hand, while its agents join
	// or later, stops them first: their data directories go with them.
	var forming atomic.Pointer[realCluster]
	sig := make(chan os.Signal, 1)
	ossignal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	sized := make(chan struct{})
	defer func() { ossignal.Stop(sig); close(sized) }()
	go func() {
		select {
		case <-sig:
			if rc := forming.Load(); rc != nil {
				rc.shutdown()
			}
			os.Exit(1)
		case <-sized: // this size is done: the next one watches for itself
		}
	}()
	c, err := startRealCluster(ctx, o, func(rc *realCluster) { forming.Store(rc); cReady.Store(rc.scaleCluster) })
	if err != nil {
		return r, err
	}
	defer c.shutdown()
	stage.Store("waiting for every agent to see 99% alive")
	if err := c.waitConverged(90*time.Second + time.Duration(o.N)*300*time.Millisecond); err != nil {
		return r, err
	}
	r.JoinSeconds, r.PaceWaitS = time.Since(t0).Seconds(), c.paceWait.Seconds()
	r.CoresJoin = cpuJoin.cores()
	progress("every agent sees 99%% of %d alive after %.0f s (%.2f cores)", o.N, r.JoinSeconds, r.CoresJoin)
	r.HeapJoined = heapDelta(before, o.N)
	o.prof.stage("joined")
	if o.Update == 0 {
		stage.Store("waiting for gossip to go quiet")
		t1 := time.Now()
		quiet := c.waitQuiet(quietBytes, o.quietTimeout())
		r.QuietSeconds = time.Since(t1).Seconds()
		if !quiet {
			r.QuietSeconds = -r.QuietSeconds
			progress("gossip not quiet after %.0f s: measuring anyway", -r.QuietSeconds)
		} else {
			progress("gossip quiet after %.0f s more", r.QuietSeconds)
		}
	}
	stage.Store("waiting for raft's roles and the clients' replicas")
	t2 := time.Now()
	if _, err := c.waitRaft(r.Servers, 60*time.Second+time.Duration(o.N)*100*time.Millisecond); err != nil {
		return r, err
	}
	r.ReplicaReadyS = time.Since(t2).Seconds()
	endStatus()
	r.HeapPerAgent = heapDelta(before, o.N)
	r.Goroutines = float64(runtime.NumGoroutine()) / float64(o.N)
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		r.OpenFiles = len(fds)
	}
	o.prof.stage("quiet")
	progress("%d servers, every agent's state at the leader's; heap %s, %.0f goroutines an agent, %d open files (limit %d)",
		r.Servers, humanBytes(r.HeapPerAgent), r.Goroutines, r.OpenFiles, r.NoFile)

	sent0, seq0, w0 := c.sent.Load(), c.seqs(), time.Now()
	cpuWindow := newCPUMeter()
	r.LeaderRPCs, r.Elections = c.leaderRPCRate(o.Window, nil)
	secs := time.Since(w0).Seconds()
	r.StateChanges = float64(c.seqs()-seq0) / secs
	r.CoresWindow = cpuWindow.cores()
	r.BytesPerNode = float64(c.sent.Load()-sent0) / float64(o.N) / secs
	progress("window: %s gossip/node/s, %.1f state changes/s, leader %.0f RPCs/s, %d elections, %.2f cores", humanBytes(r.BytesPerNode), r.StateChanges, r.LeaderRPCs, r.Elections, r.CoresWindow)

	if o.Jobs > 0 {
		var attempt []time.Duration
		var jobErr error
		rate, elections := c.leaderRPCRate(0, func() {
			for k := range o.Jobs {
				d, hosts, err := c.jobRound(ctx, k, 60*time.Second)
				if err != nil {
					jobErr = err
					return
				}
				attempt = append(attempt, d)
				r.TotalHosts += len(hosts)
				for _, h := range hosts {
					if !c.nodes[c.Index(h)].IsServer() {
						r.ClientHosts++
					}
				}
			}
		})
		if jobErr != nil {
			return r, jobErr
		}
		r.Jobs, r.LeaderRPCsJobs, r.Elections = len(attempt), rate, r.Elections+elections
		r.AttemptP50ms, r.AttemptP90ms = msf(median(attempt)), msf(pct(attempt, 0.9))
		progress("%d jobs: submit->attempt p50 %.0f ms p90 %.0f ms", r.Jobs, r.AttemptP50ms, r.AttemptP90ms)
	}

	ds, cores, err := c.convergenceRounds(o)
	if err != nil {
		return r, err
	}
	r.CoresConv = cores
	o.prof.stage("end")
	if o.check != nil {
		if err := o.check(c); err != nil {
			return r, err
		}
	}
	if hwm, err := peakRSSKiB(); err == nil {
		r.RSSPeak = float64(hwm) * 1024 / float64(o.N)
	}
	r.ConvP50ms, r.ConvP90ms, r.ConvMaxms = msf(median(ds)), msf(pct(ds, 0.9)), msf(pct(ds, 1))
	r.MinAlive = c.minAlive()
	r.RPCPeers = c.rpcPeers()
	one := syntheticState(0)
	b, err := nodestate.EncodeState(&one)
	if err != nil {
		return r, err
	}
	r.StateBytes = len(b)
	r.LoadEnd = loadAvg()
	return r, nil
}
