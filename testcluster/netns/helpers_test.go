package netns

import (
	"context"
	"testing"
	"time"
)

// twoNodes is a's and b's link of mbit (0: unshaped) on one switch.
func twoNodes(mbit int) Topology {
	n := func(name string) Node {
		if mbit == 0 {
			return Node{Name: name, Switch: "sw", Unshaped: true}
		}
		return Node{Name: name, Switch: "sw", Mbit: mbit}
	}
	return Topology{Name: "pair", Switches: []Switch{{Name: "sw"}}, Nodes: []Node{n("a"), n("b")}}
}

// testCtx is a context for one step of a test.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
