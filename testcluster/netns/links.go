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
	n, ok := tb.nodes[node]
	if !ok {
		return fmt.Errorf("set rate of %q: %w", node, ErrUnknownNode)
	}
	if mbit < 0 {
		return fmt.Errorf("set rate of %s: mbit %d must be >= 0", node, mbit)
	}
	ends := [][2]string{{n.Namespace, n.Iface}, {tb.names.fabric(), n.Port}}
	for _, e := range ends {
		var err error
		if mbit == 0 {
			// Deleting the root qdisc restores the veth's default (noqueue).
			if _, derr := run(ctx, "tc", "-n", e[0], "qdisc", "del", "dev", e[1], "root"); derr != nil && !strings.Contains(derr.Error(), "handle of zero") {
				err = derr
			}
		} else {
			err = shape(ctx, e[0], e[1], mbit)
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
