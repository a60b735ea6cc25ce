package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// PollInterval is how often the lab's waits re-check their condition.
const PollInterval = 250 * time.Millisecond

// WaitFor polls cond until it returns nil, ctx ends or timeout passes; the
// error names what was awaited and cond's last complaint.
func WaitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	var last error
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil || last == nil {
			last = err // an error caused by the deadline itself says nothing
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait %v for %s: %w", timeout, what, last)
		case <-t.C:
		}
	}
}

// Converged reports nil when every node in nodes sees exactly the members
// in nodes as alive (others may be listed as dead or left) and all agree on
// one leader among them; it returns that leader.
func (l *Lab) Converged(ctx context.Context, nodes []string) (string, error) {
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	leader := ""
	for _, n := range nodes {
		ms, err := l.Members(ctx, n)
		if err != nil {
			return "", err
		}
		alive, lead := 0, ""
		for _, m := range ms {
			if m.Status != "alive" {
				continue
			}
			if !want[m.Name] {
				return "", fmt.Errorf("%s sees %s alive, which should not be", n, m.Name)
			}
			alive++
		}
		if alive != len(nodes) {
			return "", fmt.Errorf("%s sees %d of %d members alive: %s", n, alive, len(nodes), memberSummary(ms))
		}
		ld, err := l.Leader(ctx, n)
		if err != nil {
			return "", err
		}
		lead = ld
		if !want[lead] {
			return "", fmt.Errorf("%s follows leader %q outside %v", n, lead, nodes)
		}
		if leader != "" && lead != leader {
			return "", fmt.Errorf("leaders disagree: %s and %s", leader, lead)
		}
		leader = lead
	}
	return leader, nil
}

// WaitConverged waits until [Lab.Converged] holds for nodes and returns the
// leader.
func (l *Lab) WaitConverged(ctx context.Context, nodes []string, timeout time.Duration) (string, error) {
	var leader string
	err := WaitFor(ctx, timeout, fmt.Sprintf("%d nodes to agree on members and leader", len(nodes)), func(ctx context.Context) error {
		var err error
		leader, err = l.Converged(ctx, nodes)
		return err
	})
	return leader, err
}

// WaitFormed waits until the whole cluster is formed: every node sees
// every node alive and all follow one leader. It returns the leader.
func (l *Lab) WaitFormed(ctx context.Context, timeout time.Duration) (string, error) {
	return l.WaitConverged(ctx, l.Nodes(), timeout)
}

// MeasuredPairs counts the unordered node pairs with a bandwidth figure in
// node's `shoal net --json`.
func (l *Lab) MeasuredPairs(ctx context.Context, node string) (int, []api.NetPair, error) {
	ps, err := l.Net(ctx, node)
	if err != nil {
		return 0, nil, err
	}
	seen := map[[2]string]bool{}
	for _, p := range ps {
		if p.BWMbps == nil {
			continue
		}
		k := [2]string{p.From, p.To}
		if k[0] > k[1] {
			k[0], k[1] = k[1], k[0]
		}
		seen[k] = true
	}
	return len(seen), ps, nil
}

// WaitBandwidthCycle waits until node's view holds a bandwidth figure for
// at least minPairs unordered pairs (n*(n-1)/2 is one full cycle).
func (l *Lab) WaitBandwidthCycle(ctx context.Context, node string, minPairs int, timeout time.Duration) error {
	return WaitFor(ctx, timeout, fmt.Sprintf("%d measured pairs in %s's 'shoal net'", minPairs, node), func(ctx context.Context) error {
		n, _, err := l.MeasuredPairs(ctx, node)
		if err != nil {
			return err
		}
		if n < minPairs {
			return fmt.Errorf("%d of %d pairs measured", n, minPairs)
		}
		return nil
	})
}

func memberSummary(ms []api.Member) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += " "
		}
		s += m.Name + "=" + m.Status + "/" + m.Role
	}
	return s
}
