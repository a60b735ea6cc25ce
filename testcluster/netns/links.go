package netns

import (
	"context"
	"fmt"
	"strings"
)

// SetNodeLink takes node's link down (up=false), cutting it off the fabric
// while its namespace and processes live on, or brings it back up.
func (tb *Testbed) SetNodeLink(ctx context.Context, node string, up bool) error {
	n, ok := tb.nodes[node]
	if !ok {
		return fmt.Errorf("set link of %q: %w", node, ErrUnknownNode)
	}
	if _, err := run(ctx, "ip", "-n", tb.names.fabric(), "link", "set", n.Port, state(up)); err != nil {
		return fmt.Errorf("set link of %s %s: %w", node, state(up), err)
	}
	return nil
}

// SetUplink takes the uplink between switches a and b (in either order)
// down or up, e.g. to partition the cluster.
func (tb *Testbed) SetUplink(ctx context.Context, a, b string, up bool) error {
	for i, u := range tb.topo.Uplinks {
		if (u.A == a && u.B == b) || (u.A == b && u.B == a) {
			if _, err := run(ctx, "ip", "-n", tb.names.fabric(), "link", "set", tb.uplinkIf[i][0], state(up)); err != nil {
				return fmt.Errorf("set uplink %s-%s %s: %w", a, b, state(up), err)
			}
			return nil
		}
	}
	return fmt.Errorf("set uplink %s-%s: no such uplink", a, b)
}

// SetNodeRate changes node's link rate in both directions; mbit 0 removes
// the shaping. NodeInfo.Mbit keeps reporting the topology's rate.
func (tb *Testbed) SetNodeRate(ctx context.Context, node string, mbit int) error {
	return tb.SetNodeRates(ctx, node, mbit, mbit)
}

// SetNodeRates changes node's link rate away from it (out: the
// namespace's egress) and toward it (in: its switch port's egress); 0
// removes that direction's shaping.
func (tb *Testbed) SetNodeRates(ctx context.Context, node string, out, in int) error {
	n, ok := tb.nodes[node]
	if !ok {
		return fmt.Errorf("set rate of %q: %w", node, ErrUnknownNode)
	}
	if out < 0 || in < 0 {
		return fmt.Errorf("set rate of %s: mbit %d out, %d in must be >= 0", node, out, in)
	}
	ends := []struct {
		ns, dev string
		mbit    int
	}{{n.Namespace, n.Iface, out}, {tb.names.fabric(), n.Port, in}}
	for _, e := range ends {
		var err error
		if e.mbit == 0 {
			// Deleting the root qdisc restores the veth's default (noqueue).
			if _, derr := run(ctx, "tc", "-n", e.ns, "qdisc", "del", "dev", e.dev, "root"); derr != nil && !strings.Contains(derr.Error(), "handle of zero") {
				err = derr
			}
		} else {
			err = shape(ctx, e.ns, e.dev, e.mbit)
		}
		if err != nil {
			return fmt.Errorf("set rate of %s: %w", node, err)
		}
	}
	return nil
}

func state(up bool) string {
	if up {
		return "up"
	}
	return "down"
}
