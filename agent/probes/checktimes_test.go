package probes

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/probes/child"
	"github.com/shoal-hpc/shoal/probeplan"
)

// TestLinkChecks_OutOfStep simulates the four-node testbed's checks: the
// agents started within milliseconds of each other, each node's rotation
// begins at the first peer by name once the first cycle ends, and a probe
// server takes one test at a time (a check that finds its peer in another
// is refused and lost). pd, whose link dropped to a tenth (its checks take
// ten times as long), starts last in every round of checks. With checks at
// fixed intervals its checks of pa and pb find them busy every time, and
// it never reaches the Confirm peers a change needs; with the drawn waits
// (NextCheckIn, checkRand) it does within a few checks, for every start.
func TestLinkChecks_OutOfStep(t *testing.T) {
	t.Parallel()
	cfg := probeplan.DefaultLinkCheckConfig()
	cfg.Interval = 5 * time.Second
	names := []string{"pa", "pb", "pc", "pd"}
	const maxChecks = 6
	for s := range 50 {
		start := time.Date(2026, 11, 29, 17, 0, s, 0, time.UTC)
		t.Run(fmt.Sprint("start ", s), func(t *testing.T) {
			if n := checksToConfirm(cfg, names, "pd", start, 30*maxChecks); n > maxChecks {
				t.Fatalf("pd confirmed its change after %d checks (or never), want at most %d", n, maxChecks)
			}
		})
	}
}

// checksToConfirm runs the nodes' checks from start, in step (10 ms
// apart, slow last), for at most limit checks of slow, and returns how many
// checks slow made until its checks reached cfg.Confirm different peers
// in a row (all its checks read its link slower); limit+1 when they did
// not.
func checksToConfirm(cfg probeplan.LinkCheckConfig, names []string, slow string, start time.Time, limit int) int {
	type node struct {
		name string
		next time.Time
		last string
	}
	nodes := make([]*node, len(names))
	next := map[string]func() time.Duration{}
	for i, n := range names {
		at := start.Add(time.Duration(i) * 10 * time.Millisecond)
		r := checkRand(n, at)
		next[n] = func() time.Duration { return cfg.NextCheckIn(r) }
		nodes[i] = &node{name: n, next: at.Add(next[n]())}
	}
	busyUntil := map[string]time.Time{}
	var reached []string
	checks := 0
	for checks < limit {
		c := nodes[0]
		for _, n := range nodes[1:] {
			if n.next.Before(c.next) {
				c = n
			}
		}
		now := c.next
		c.next = now.Add(next[c.name]())
		var cands []checkCandidate
		for _, n := range names {
			if n != c.name {
				cands = append(cands, checkCandidate{Peer: child.Peer{Name: n}, Figure: 100})
			}
		}
		p, _ := chooseCheckPeer(cands, c.last, nil)
		c.last = p.Name
		took := 50 * time.Millisecond // 512 KiB at 100 Mbit/s, with the TLS handshake
		if c.name == slow || p.Name == slow {
			took = 500 * time.Millisecond
		}
		ok := !now.Before(busyUntil[p.Name])
		if ok {
			busyUntil[p.Name] = now.Add(took)
		}
		if c.name != slow {
			continue
		}
		checks++
		if !ok {
			continue
		}
		reached = append(reached, p.Name)
		distinct := map[string]bool{}
		for i := len(reached) - 1; i >= 0 && len(distinct) < cfg.Confirm; i-- {
			distinct[reached[i]] = true
		}
		if len(distinct) >= cfg.Confirm {
			return checks
		}
	}
	return limit + 1
}
