package netns

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// pollInterval is how often wait loops re-check their condition.
const pollInterval = 20 * time.Millisecond

// waitFor polls cond until it reports true, returns an error, ctx ends or
// timeout passes; what names the condition in the error.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if err == nil && ok {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("wait for %s: %w (last error: %w)", what, ctx.Err(), lastErr)
			}
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// WaitListening waits until a TCP socket listens on port inside node's
// namespace (checked with ss), or timeout passes.
func (tb *Testbed) WaitListening(ctx context.Context, node string, port int, timeout time.Duration) error {
	n, ok := tb.nodes[node]
	if !ok {
		return fmt.Errorf("wait listening on %q: %w", node, ErrUnknownNode)
	}
	return waitFor(ctx, timeout, fmt.Sprintf("tcp port %d listening on %s", port, node), func(ctx context.Context) (bool, error) {
		out, err := run(ctx, "ip", "netns", "exec", n.Namespace, "ss", "-Hltn", "sport = :"+strconv.Itoa(port))
		return strings.TrimSpace(out) != "", err
	})
}

// waitEstablished waits until node has an established TCP connection to
// port.
func (tb *Testbed) waitEstablished(ctx context.Context, node string, port int, timeout time.Duration) error {
	n := tb.nodes[node]
	return waitFor(ctx, timeout, fmt.Sprintf("tcp connection from %s to port %d", node, port), func(ctx context.Context) (bool, error) {
		out, err := run(ctx, "ip", "netns", "exec", n.Namespace, "ss", "-Htn", "state", "established", "dport = :"+strconv.Itoa(port))
		return strings.TrimSpace(out) != "", err
	})
}

func lookPath(tool string) (string, error) {
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", fmt.Errorf("look up %s: %w", tool, err)
	}
	return p, nil
}
