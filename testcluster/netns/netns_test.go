package netns

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestTwoNodes_PingAndHostnames(t *testing.T) {
	t.Parallel()
	tb := UpForTest(t, twoNodes(100), Options{})
	ctx := testCtx(t, 30*time.Second)

	for _, node := range []string{"a", "b"} {
		out, err := tb.Run(ctx, node, "hostname")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out); got != node {
			t.Errorf("hostname on %s = %q, want %q", node, got, node)
		}
	}

	bIP, ok := tb.Node("b")
	if !ok || !tb.Subnet().Contains(bIP) {
		t.Fatalf("Node(b) = %v, %v; want an address in %v", bIP, ok, tb.Subnet())
	}
	if out, err := tb.Run(ctx, "a", "ping", "-c", "2", "-i", "0.2", "-W", "2", bIP.String()); err != nil {
		t.Fatalf("ping a->b by address: %v\n%s", err, out)
	}
	// /etc/netns/NS/hosts resolves node names.
	if out, err := tb.Run(ctx, "b", "ping", "-c", "1", "-W", "2", "a"); err != nil {
		t.Fatalf("ping b->a by name: %v\n%s", err, out)
	}

	// No way out: only the testbed's /24 is routed; asking the kernel for a
	// route sends nothing.
	if out, err := tb.Run(ctx, "a", "ip", "route", "show", "default"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("default route on a: %q, %v; want none", out, err)
	}
	if out, err := tb.Run(ctx, "a", "ip", "route", "get", "192.0.2.1"); err == nil {
		t.Errorf("route from a to 192.0.2.1 exists: %s", out)
	}

	if _, ok := tb.Node("nope"); ok {
		t.Error("Node(nope) found")
	}
	if err := tb.Command(ctx, "nope", "true").Run(); err == nil {
		t.Error("Command on unknown node ran")
	}
}

func TestPartition_NodeLinkDownAndUp(t *testing.T) {
	t.Parallel()
	tb := UpForTest(t, twoNodes(0), Options{})
	ctx := testCtx(t, 30*time.Second)
	bIP, _ := tb.Node("b")
	ping := func() error {
		_, err := tb.Run(ctx, "a", "ping", "-c", "1", "-W", "1", bIP.String())
		return err
	}
	if err := ping(); err != nil {
		t.Fatalf("before partition: %v", err)
	}
	if err := tb.SetNodeLink(ctx, "b", false); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err == nil {
		t.Fatal("ping crossed a link that is down")
	}
	if err := tb.SetNodeLink(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, 10*time.Second, "ping after link up", func(ctx2 context.Context) (bool, error) {
		return ping() == nil, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestUplinkDownAndRateChange(t *testing.T) {
	t.Parallel()
	topo := Topology{
		Switches: []Switch{{Name: "s1"}, {Name: "s2"}},
		Nodes:    []Node{{Name: "a", Switch: "s1", Mbit: 100}, {Name: "b", Switch: "s2", Mbit: 100}},
		Uplinks:  []Uplink{{A: "s1", B: "s2", Mbit: 50}},
	}
	tb := UpForTest(t, topo, Options{})
	ctx := testCtx(t, 30*time.Second)
	ping := func() error {
		_, err := tb.Run(ctx, "a", "ping", "-c", "1", "-W", "1", "b")
		return err
	}
	if err := ping(); err != nil {
		t.Fatalf("across the uplink: %v", err)
	}
	if err := tb.SetUplink(ctx, "s2", "s1", false); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err == nil {
		t.Fatal("ping crossed an uplink that is down")
	}
	if err := tb.SetUplink(ctx, "s1", "s2", true); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, 10*time.Second, "ping after uplink up", func(context.Context) (bool, error) {
		return ping() == nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := tb.SetUplink(ctx, "s1", "s3", false); err == nil {
		t.Error("SetUplink of a missing uplink succeeded")
	}

	qdisc := func() string {
		out, err := tb.Run(ctx, "a", "tc", "qdisc", "show", "dev", Iface)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := tb.SetNodeRate(ctx, "a", 20); err != nil {
		t.Fatal(err)
	}
	if q := qdisc(); !strings.Contains(q, "tbf") || !strings.Contains(q, "rate 20Mbit") {
		t.Errorf("after SetNodeRate 20: %s", q)
	}
	if err := tb.SetNodeRate(ctx, "a", 0); err != nil {
		t.Fatal(err)
	}
	if q := qdisc(); strings.Contains(q, "tbf") {
		t.Errorf("after SetNodeRate 0: %s", q)
	}
}
