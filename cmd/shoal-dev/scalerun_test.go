package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/shoal-hpc/shoal/gossip"
)

// TestScaleConvergence runs a small in-memory cluster through the whole
// measurement: every agent gets every state, a timed change reaches all of
// them, bytes are counted and the push/pull sizes grow with the rows.
func TestScaleConvergence(t *testing.T) {
	t.Parallel()
	o := scaleOpts{N: 6, Rounds: 3, Window: 500 * time.Millisecond, Update: 300 * time.Millisecond, Seed: 7, Config: scaleConfig()}
	o.Config.GossipInterval = 50 * time.Millisecond
	r, err := runScale(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.MinAlive != o.N {
		t.Errorf("some agent sees %d alive, want %d", r.MinAlive, o.N)
	}
	if r.ConvP50ms <= 0 || r.ConvP90ms < r.ConvP50ms || r.ConvMaxms < r.ConvP90ms || r.ConvMaxms > 5000 {
		t.Errorf("convergence p50 %.1f p90 %.1f max %.1f ms: want 0 < p50 <= p90 <= max < 5 s", r.ConvP50ms, r.ConvP90ms, r.ConvMaxms)
	}
	if r.BytesPerNode <= 0 {
		t.Errorf("no gossip bytes counted")
	}
	if r.PushPull < o.N*r.StateBytes/2 || r.PushPullRows <= r.PushPull {
		t.Errorf("push/pull %d bytes (%d with rows) for %d states of %d bytes", r.PushPull, r.PushPullRows, o.N, r.StateBytes)
	}
}

// TestScaleConvergenceWaitsForEveryAgent checks the sweep itself: when
// convergence returns, every agent holds the changed state.
func TestScaleConvergenceWaitsForEveryAgent(t *testing.T) {
	t.Parallel()
	o := scaleOpts{N: 8, Seed: 3, Config: scaleConfig()}
	c, err := startScaleCluster(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.shutdown()
	if err := c.waitConverged(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	for round, src := range []int{5, 2, 7} {
		users := 500 + round
		// Broadcasts are epidemic: an agent can miss all of a change's
		// retransmissions and then gets it from the next push/pull, which
		// comes within two intervals. The bound is that guarantee; what this
		// test checks is what convergence returns, not how fast.
		if _, err := c.convergence(src, users, 2*o.Config.PushPullInterval+5*time.Second); err != nil {
			t.Fatal(err)
		}
		for i, g := range c.agents {
			if e, ok := g.Lookup(agentName(src)); !ok || e.State.Dyn.Users != users {
				t.Fatalf("round %d: convergence returned while agent %d held users=%d of %s, want %d", round, i, e.State.Dyn.Users, agentName(src), users)
			}
		}
	}
}

// TestScaleClientLayout runs the servers-and-clients layout small: raft among 3
// servers, 7 clients following their feeds, jobs submitted on the leader,
// placed by the leader core and timed to their nodes' own copies of the
// state. A job of 4 nodes among 3 servers has a client host, so a client
// replica that never sees its attempt fails the round.
func TestScaleClientLayout(t *testing.T) {
	t.Parallel()
	o := scaleOpts{N: 10, Servers: 3, Jobs: 3, PeerLinks: 4, Rounds: 2, Window: time.Second, Seed: 5, Config: scaleConfig()}
	o.Config.GossipInterval = 50 * time.Millisecond
	r, err := runScale(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.Jobs != o.Jobs || r.TotalHosts != 4*o.Jobs || r.ClientHosts < o.Jobs {
		t.Errorf("%d jobs timed on %d hosts (%d clients), want %d jobs on 4 hosts each, one client or more", r.Jobs, r.TotalHosts, r.ClientHosts, o.Jobs)
	}
	if r.AttemptP50ms <= 0 || r.AttemptP90ms < r.AttemptP50ms || r.PlaceP50ms <= 0 || r.PlaceP50ms > r.AttemptP90ms {
		t.Errorf("submit->attempt p50 %.1f p90 %.1f ms, placement p50 %.2f ms: want 0 < placement <= attempt", r.AttemptP50ms, r.AttemptP90ms, r.PlaceP50ms)
	}
	// 2 followers, each heartbeated and sent the commit index every
	// 50-100 ms: tens per second, and no client in it.
	if r.LeaderRPCs < 5 || r.LeaderRPCs > 90 {
		t.Errorf("leader sends %.1f RPCs/s to 2 followers", r.LeaderRPCs)
	}
	if r.RPCPeers != 2 {
		t.Errorf("the raft servers sent RPCs to %d peers, want the leader's 2 followers", r.RPCPeers)
	}
	// The heap of 7 replicas is within the collector's noise; the bytes
	// are the feeds' heartbeats and entries.
	if r.ReplicaBytes <= 0 {
		t.Errorf("replica bytes/client/s %.1f: want the feeds' bytes counted", r.ReplicaBytes)
	}
}

// TestPacketNetDropsWhenBufferFull checks the UDP-like boundary: packets
// to an agent that reads none pile up to udpBuffer, and the rest are lost
// without the sender waiting.
func TestPacketNetDropsWhenBufferFull(t *testing.T) {
	t.Parallel()
	var network memberlist.MockNetwork
	var sent atomic.Int64
	var pn packetNet
	a := &countingTransport{MockTransport: network.NewTransport("a"), sent: &sent, net: &pn}
	b := network.NewTransport("b") // never reads its packets
	defer a.Shutdown()
	defer b.Shutdown()
	addr := b.FinalAdvertiseAddr
	host, port, err := addr("", 0)
	if err != nil {
		t.Fatal(err)
	}
	to := net.JoinHostPort(host.String(), fmt.Sprint(port))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range udpBuffer + 50 {
			if _, err := a.WriteTo([]byte(fmt.Sprintf("%04d", i)), to); err != nil {
				t.Error(err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a send waited for the receiver")
	}
	if got := pn.dropped.Load(); got != 50 {
		t.Errorf("%d packets dropped, want the 50 beyond the %d-packet buffer", got, udpBuffer)
	}
	if got := sent.Load(); got != int64(4*(udpBuffer+50)) {
		t.Errorf("%d bytes counted as sent, want every packet's", got)
	}
	// The receiver reads the buffered packets in the order they were
	// sent, from the sender's address, and the buffer has room again.
	from, _, _ := a.FinalAdvertiseAddr("", 0)
	for i := range udpBuffer {
		select {
		case p := <-b.PacketCh():
			if want := fmt.Sprintf("%04d", i); string(p.Buf) != want {
				t.Fatalf("packet %d reads %q, want %q", i, p.Buf, want)
			}
			if host, _, _ := net.SplitHostPort(p.From.String()); host != from.String() {
				t.Fatalf("packet from %s, want the sender %s", p.From, from)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("packet %d of the %d buffered never arrived", i, udpBuffer)
		}
	}
	if _, err := a.WriteTo([]byte("next"), to); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-b.PacketCh():
		if string(p.Buf) != "next" {
			t.Fatalf("read %q after the buffer drained, want \"next\"", p.Buf)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a packet sent after the buffer drained never arrived")
	}
	if got := pn.dropped.Load(); got != 50 {
		t.Errorf("%d packets dropped after the buffer drained, want still 50", got)
	}
}

// TestWaitQuietCountsPacketsOnly checks the quiet wait: a cluster whose
// agents stream (push/pull) but send no packets is quiet, one that keeps
// sending packets is not.
func TestWaitQuietCountsPacketsOnly(t *testing.T) {
	t.Parallel()
	c := &scaleCluster{agents: make([]*gossip.Gossip, 2)}
	stop := make(chan struct{})
	defer close(stop)
	busy := func(n *atomic.Int64) {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				n.Add(quietBytes) // 100 times a second: 50 times the quiet rate per agent
			}
		}
	}
	go busy(&c.sent)
	if !c.waitQuiet(quietBytes, 10*time.Second) {
		t.Fatal("streams alone kept the cluster from being quiet")
	}
	go busy(&c.packetBytes)
	if c.waitQuiet(quietBytes, 5*time.Second) {
		t.Fatal("a cluster sending 100 KiB of packets a second per agent counted as quiet")
	}
}

// TestLagMeterPaces checks what holds joins back: the meter reports a
// late timer for between 0.5 and 1 s, a sleep still running past its
// time as late, and waitBelow returns only once timers are on time.
func TestLagMeterPaces(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	m := &lagMeter{quit: make(chan struct{}), start: t0} // fed by hand, not by its own timer
	m.observe(t0.Add(100*time.Millisecond), 200*time.Millisecond)
	for _, c := range []struct {
		at   time.Duration
		want time.Duration
	}{
		{100 * time.Millisecond, 200 * time.Millisecond},
		{600 * time.Millisecond, 200 * time.Millisecond}, // the previous bucket
		{1100 * time.Millisecond, 0},                     // two buckets on
	} {
		if got := m.recentAt(t0.Add(c.at)); got != c.want {
			t.Errorf("%v after a timer 200ms late the meter reads %v, want %v", c.at-100*time.Millisecond, got, c.want)
		}
	}
	// A sleep that began 300 ms ago and has not ended is 295 ms late.
	now := time.Now()
	m.mu.Lock()
	m.start, m.cur, m.prev, m.sleeping = now, 0, 0, now.Add(-300*time.Millisecond)
	m.mu.Unlock()
	if got := m.recentAt(now); got != 295*time.Millisecond {
		t.Errorf("a sleep of 5ms running for 300ms reads %v late, want 295ms", got)
	}
	done := make(chan time.Duration)
	go func() { done <- m.waitBelow(10 * time.Millisecond) }()
	select {
	case <-done:
		t.Fatal("waitBelow returned while a timer was 295ms late")
	case <-time.After(100 * time.Millisecond):
	}
	end := time.Now()
	m.observe(end, end.Sub(now)+300*time.Millisecond-lagTick) // the sleep ends, late by all it ran
	select {
	case waited := <-done:
		t.Fatalf("waitBelow returned %v after the late sleep ended, want it to wait out the bucket", waited)
	case <-time.After(50 * time.Millisecond):
	}
	select {
	case waited := <-done:
		if waited < lagBucket {
			t.Errorf("waitBelow reports %v waited, want at least the %v a late timer counts", waited, lagBucket)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("waitBelow did not return with timers %v late", m.recent())
	}
}

// TestResultsSavedAndRead checks -results: a size saved is read back
// whole, a size never run is reported absent, and a file holding another
// size is refused rather than printed under the wrong n.
func TestResultsSavedAndRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := scaleResult{N: 300, ConvP90ms: 710, HeapPerAgent: 393.4 * 1024, At: "2026-11-24T06:26:00Z"}
	if err := saveResult(dir, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := loadResult(dir, 300)
	if err != nil || !ok || got != want {
		t.Fatalf("read back %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if _, ok, err := loadResult(dir, 1000); ok || err != nil {
		t.Fatalf("a size never saved: ok %v, err %v; want absent", ok, err)
	}
	if err := os.Rename(resultPath(dir, 300), resultPath(dir, 100)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadResult(dir, 100); err == nil {
		t.Fatal("a result of 300 agents saved as 100 was read")
	}
}

// TestOwedPacketsPaces checks the joins' debt: a join adds its state's
// re-gossip, state packets sent pay it off (never below zero), so does
// time at the given rate, and waitBelow holds the next join until the
// debt is under the limit.
func TestOwedPacketsPaces(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	o := owedPackets{rate: 1}                            // a packet a second: time pays almost nothing here
	o.add(int64(299)*int64(retransmitLimit(300)), &sent) // the 300th agent joins 299
	if got := o.current(&sent); got != 299*12 {
		t.Fatalf("owed %d after the 300th join, want 299 agents x 12 sends", got)
	}
	sent.Add(1000)
	if got := o.current(&sent); got != 299*12-1000 {
		t.Fatalf("owed %d after 1000 state packets, want %d", got, 299*12-1000)
	}
	done := make(chan struct{})
	go func() { o.waitBelow(500, &sent); close(done) }()
	select {
	case <-done:
		t.Fatal("waitBelow returned with about 2588 packets owed, limit 500")
	case <-time.After(100 * time.Millisecond):
	}
	sent.Add(5000) // more than owed: the debt is 0, not negative
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("waitBelow did not return with %d owed", o.current(&sent))
	}
	o.add(10, &sent)
	if got := o.current(&sent); got != 10 {
		t.Fatalf("owed %d after paying off more than owed and a join of 10, want 10", got)
	}
	// With no packet counted, time pays: 10,000 a second.
	fast := owedPackets{rate: 10000}
	fast.add(3000, &sent)
	t0 := time.Now()
	fast.waitBelow(500, &sent)
	if waited := time.Since(t0); waited < 200*time.Millisecond {
		t.Errorf("3000 owed paid down to 500 in %v at 10,000 a second, want about 250ms", waited)
	}
	if retransmitLimit(999) != 12 || retransmitLimit(1000) != 16 {
		t.Fatalf("retransmitLimit(999, 1000) = %d, %d; want memberlist's 12 and 16", retransmitLimit(999), retransmitLimit(1000))
	}
}
