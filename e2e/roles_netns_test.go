package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// TestRoles_EightNamespaces: eight agents in eight namespaces, no role
// configured (the default --servers 5), form 3 voters, 2 non-voters and
// 3 clients; a job submitted on a client runs on clients; killing the
// leader, then a voter, is healed each time by promotion: writes through
// a client commit again and the servers are back to 5, taken from the
// clients.
func TestRoles_EightNamespaces(t *testing.T) {
	skipUnlessEnabled(t)
	topo, err := netns.LoadTopology("testdata/eight.json")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	l := lab.UpForTest(t, topo, lab.Options{
		Shoal:     shoalBin(t),
		AgentArgs: []string{"--bandwidth-interval", "1h", "--latency-interval", "10m", "--dead-voter-grace", "5s"},
	})
	if _, err := l.WaitFormed(t.Context(), 2*formTimeout); err != nil {
		t.Fatal(err)
	}
	waitFull := func(node string, alive int) census {
		t.Helper()
		var got census
		if err := lab.WaitFor(t.Context(), 2*formTimeout, fmt.Sprintf("3 voters, 2 non-voters, %d clients seen from %s", alive-5, node), func(ctx context.Context) error {
			ms, err := l.Members(ctx, node)
			if err != nil {
				return err
			}
			if got = countRoles(ms); !got.full(3, 5, alive) {
				return fmt.Errorf("%v", got)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	alive := len(l.Nodes())
	got := waitFull(l.Nodes()[alive-1], alive)
	t.Logf("%d agents formed in %v: %v", alive, time.Since(start).Round(time.Millisecond), got)

	// `shoal run` on a client: six single-rank hosts of eight, so at least
	// one is a client; the ranks print their namespace's hostname.
	cli := got.Clients[0]
	r, err := l.Exec(ctxFor(t, 3*time.Minute), cli, "run", "-n", "6", "--ppn", "1", "--force", "--mpi", "none", "--", "hostname")
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != 0 {
		t.Fatalf("shoal run on client %s: exit %d\n%s%s", cli, r.Code, r.Stdout, r.Stderr)
	}
	var ranOn []string
	for _, h := range strings.Fields(r.Stdout) {
		if slices.Contains(got.Clients, h) {
			ranOn = append(ranOn, h)
		}
	}
	if len(ranOn) == 0 {
		t.Fatalf("job from client %s ran on %q, no client among them (clients %v)", cli, r.Stdout, got.Clients)
	}
	t.Logf("shoal run on client %s ran on clients %v (all hosts %q)", cli, ranOn, strings.Fields(r.Stdout))

	for k := range 2 {
		cs := waitFull(cli, alive)
		victim := cs.Leader[0]
		if k > 0 {
			victim = cs.Voters[0]
		}
		writer := cs.Clients[len(cs.Clients)-1]
		if err := l.KillAgent(victim); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		alive--
		if err := lab.WaitFor(t.Context(), 2*formTimeout, "a submit through client "+writer, func(ctx context.Context) error {
			_, err := l.Shoal(ctx, writer, "submit", "-n", "1", "--force", "--mpi", "none", "--", "true")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		wrote := time.Since(killed)
		healed := waitFull(writer, alive)
		if slices.Contains(healed.servers(), victim) {
			t.Fatalf("%s listed as a server after its kill: %v", victim, healed)
		}
		t.Logf("kill %d (%s): write through client %s after %v, 5 servers after %v: %v", k+1, victim, writer,
			wrote.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond), healed)
	}
	cs := waitFull(cli, alive)
	r, err = l.Exec(ctxFor(t, 3*time.Minute), cs.Clients[0], "run", "-n", "3", "--ppn", "1", "--force", "--mpi", "none", "--", "hostname")
	if err != nil || r.Code != 0 {
		t.Fatalf("shoal run after two kills: %v exit %d\n%s%s", err, r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("after two kills, a job from %s ran on %q; total %v", cs.Clients[0], strings.Fields(r.Stdout), time.Since(start).Round(time.Millisecond))
}
