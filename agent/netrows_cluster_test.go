package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/rows"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/tlsca"
)

// bwLinks reports whether links hold a measured bandwidth for every
// ordered pair of names.
func bwLinks(snapLinks map[[2]string]bool, names []string) bool {
	for _, a := range names {
		for _, b := range names {
			if a != b && !snapLinks[[2]string{a, b}] {
				return false
			}
		}
	}
	return true
}

func leaderLinks(a *agent.Agent) map[[2]string]bool {
	got := map[[2]string]bool{}
	for _, l := range a.PlacementSnapshot().Links {
		if l.Measured && l.AvailMbps > 0 {
			got[[2]string{l.From, l.To}] = true
		}
	}
	return got
}

func netLinks(ps []api.NetPair) map[[2]string]bool {
	got := map[[2]string]bool{}
	for _, p := range ps {
		if p.BWMbps != nil && *p.BWMbps > 0 {
			got[[2]string{p.From, p.To}] = true
		}
	}
	return got
}

// holdsRows reports whether a's table holds a row with bandwidth of every
// named node, of the boot gossip shows for it there.
func holdsRows(a *agent.Agent, names []string) bool {
	have := map[string]nodestate.NetRow{}
	for _, r := range a.NetRows() {
		have[r.Node] = r
	}
	for _, n := range names {
		r, ok := have[n]
		e, known := a.Gossip().Node(n)
		if !ok || !known || r.Boot != e.State.Boot || len(r.Cells) == 0 {
			return false
		}
	}
	return true
}

// postRow sends body to POST /v1/netrow of node i with the Authorization
// header auth, and returns the status and message.
func postRow(t *testing.T, c *testcluster.Cluster, i int, auth string, body []byte) (int, string) {
	t.Helper()
	cl := c.Client(i)
	return postRowWith(t, cl.HTTP, cl.Base, auth, body)
}

// postRowWith is postRow through hc (its own TLS client certificate) to
// the agent at base.
func postRowWith(t *testing.T, hc *http.Client, base, auth string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/netrow", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error
}

// TestNetRows_ReachServers: rows no longer travel by gossip. A bandwidth
// measurement a node makes reaches the leader's placement snapshot and
// GET /v1/net on every node through the servers' tables; the route takes
// rows from agents only; a restarted server has every row again at once,
// although rows do not change and the periodic refresh is an hour away
// (so only the sender's new-server fill can have brought them).
func TestNetRows_ReachServers(t *testing.T) {
	t.Parallel()
	bin := testcluster.BuildShoal(t)
	// Let uid 65534 reach the socket in the data directory and the helper
	// binary (as TestLocalSocket does): the test's directories are 0700.
	binDir := t.TempDir()
	if err := os.Chmod(filepath.Dir(binDir), 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 3
	c := testcluster.New(t, n, testcluster.Options{Twins: true, Bin: bin, Configure: func(i int, cfg *agent.Config) {
		fastProbes(i, cfg)
		// One bandwidth cycle and one latency round at start, then rows
		// stay as they are for the test's length.
		cfg.Probes.BandwidthInterval = time.Hour
		cfg.Probes.LatencyInterval = time.Hour
		cfg.Rows = rows.Config{MinInterval: 500 * time.Millisecond, Refresh: time.Hour}
	}})
	leader := c.WaitLeader(45 * time.Second)
	names := []string{c.Name(0), c.Name(1), c.Name(2)}
	ctx := context.Background()
	start := time.Now()

	testcluster.WaitFor(t, 60*time.Second, "every ordered pair's bandwidth in the leader's placement snapshot", func() bool {
		return bwLinks(leaderLinks(c.Agent(leader)), names)
	})
	t.Logf("leader's snapshot has every link %v after the leader was elected", time.Since(start).Round(time.Millisecond))
	testcluster.WaitFor(t, 30*time.Second, "every ordered pair's bandwidth in GET /v1/net on every node", func() bool {
		for i := range n {
			ps, err := c.Client(i).Net(ctx)
			if err != nil || !bwLinks(netLinks(ps), names) {
				return false
			}
		}
		return true
	})
	for i := range n {
		sends, b := c.Agent(i).NetRowsSent()
		row := c.Agent(i).OwnNetRow()
		enc, _ := nodestate.EncodeNetRow(&row)
		t.Logf("%s: own row v%d, %d cells, %d B; %d rows (%d B) sent to other servers in %v", c.Name(i), row.V, len(row.Cells),
			len(enc), sends, b, time.Since(start).Round(time.Second))
	}

	t.Run("agents only", func(t *testing.T) {
		good, _ := nodestate.EncodeNetRow(&nodestate.NetRow{Node: "ghost", Boot: 1, V: 1, Cells: []nodestate.NetEntry{{Peer: c.Name(0), AvailMbps: 5, BWAt: 1}}})
		if code, msg := postRow(t, c, 0, "Job 7.0.deadbeef", good); code != http.StatusForbidden {
			t.Errorf("a job capability: %d %q, want 403", code, msg)
		}
		if code, _ := postRow(t, c, 0, "", good); code != http.StatusUnauthorized {
			t.Errorf("no credentials: %d, want 401", code)
		}
		if code, msg := postRow(t, c, 0, "Bearer "+c.Token(), []byte(`{"node":"ghost","cells":[{"p":"x","bw":-1}]}`)); code != http.StatusBadRequest || !strings.Contains(msg, "bad network entry") {
			t.Errorf("a negative bandwidth: %d %q, want 400", code, msg)
		}
		huge, _ := json.Marshal(nodestate.NetRow{Node: "ghost", Boot: 1, V: 2, Cells: make([]nodestate.NetEntry, nodestate.MaxNetCells+1)})
		if code, msg := postRow(t, c, 0, "Bearer "+c.Token(), huge); code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "at most 16384") {
			t.Errorf("a row of %d cells: %d %q, want 413", nodestate.MaxNetCells+1, code, msg)
		}
		pad, _ := json.Marshal(map[string]string{"node": "ghost", "pad": strings.Repeat("x", nodestate.MaxNetRowBytes)})
		if code, msg := postRow(t, c, 0, "Bearer "+c.Token(), pad); code != http.StatusRequestEntityTooLarge {
			t.Errorf("a body over %d bytes: %d %q, want 413", nodestate.MaxNetRowBytes, code, msg)
		}
		if code, msg := postRow(t, c, 0, "Bearer "+c.Token(), []byte(`{"node":"ghost","boot":1,"v":3,"base":2,"cells":[]}`)); code != http.StatusConflict || !strings.Contains(msg, "send the whole row") {
			t.Errorf("a delta on a base the server does not hold: %d %q, want 409", code, msg)
		}
		for _, r := range c.Agent(0).NetRows() {
			if r.Node == "ghost" {
				t.Fatalf("a refused row was kept: %+v", r)
			}
		}
		if code, msg := postRow(t, c, 0, "Bearer "+c.Token(), good); code != http.StatusNoContent {
			t.Fatalf("the token: %d %q, want 204", code, msg)
		}
		if os.Geteuid() != 0 {
			t.Skip("needs root to send from uid 65534 over the socket")
		}
		ans := asUser(t, copyExecutable(t, binDir), c.Agent(0).SocketPath(), 65534, sockReq{Method: "POST", Path: "/v1/netrow", Body: good})
		if ans.Code != http.StatusForbidden {
			t.Errorf("a local non-root user: %d %q, want 403", ans.Code, ans.Msg)
		}
	})

	t.Run("a node publishes only its own row", func(t *testing.T) {
		// As node 1 over mutual TLS, with a certificate of its own name
		// from the cluster's CA, as its agent presents.
		asNode := func(name string) *http.Client {
			ca, err := tlsca.DeriveCA(c.Token())
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := ca.Issue(tlsca.AgentRequest(name, "127.0.0.1", time.Hour), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
				TLSClientConfig: tlsca.ClientConfig(tlsca.Pool(ca.Cert), tlsca.FixedLeaf(leaf), "")}}
		}
		post := func(hc *http.Client, body []byte) (int, string) {
			return postRowWith(t, hc, c.Client(0).Base, "", body)
		}
		heldRow := func(node string) (nodestate.NetRow, bool) {
			for _, r := range c.Agent(0).NetRows() {
				if r.Node == node {
					return r, true
				}
			}
			return nodestate.NetRow{}, false
		}
		victim := c.Name(2)
		before, ok := heldRow(victim)
		if !ok {
			t.Fatalf("server %s holds no row of %s", c.Name(0), victim)
		}
		forged, _ := nodestate.EncodeNetRow(&nodestate.NetRow{Node: victim, Boot: before.Boot, V: before.V + 1000,
			Cells: []nodestate.NetEntry{{Peer: c.Name(0), AvailMbps: 1, BWAt: 1}}})
		node1 := asNode(c.Name(1))
		code, msg := post(node1, forged)
		if code != http.StatusForbidden || !strings.Contains(msg, fmt.Sprintf("the certificate of node %q may send only that node's network row", c.Name(1))) {
			t.Fatalf("%s's certificate sending %s's row: %d %q, want 403", c.Name(1), victim, code, msg)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("the refusal is not one line: %q", msg)
		}
		if after, _ := heldRow(victim); after.V >= before.V+1000 || slices.ContainsFunc(after.Cells, func(e nodestate.NetEntry) bool { return e.AvailMbps == 1 }) {
			t.Fatalf("the refused row reached the matrix: %s's row is now %+v (was v%d)", victim, after, before.V)
		}
		// Its own row, as its sender would send it, is taken.
		ownRow := c.Agent(1).OwnNetRow()
		own, _ := nodestate.EncodeNetRow(&ownRow)
		if code, msg := post(node1, own); code != http.StatusNoContent {
			t.Fatalf("%s's certificate sending its own row: %d %q, want 204", c.Name(1), code, msg)
		}
		// And a new node's first row under its own name reaches the table.
		fresh, _ := nodestate.EncodeNetRow(&nodestate.NetRow{Node: "newcomer", Boot: 1, V: 1, Cells: []nodestate.NetEntry{{Peer: c.Name(0), AvailMbps: 7, BWAt: 1}}})
		if code, msg := post(asNode("newcomer"), fresh); code != http.StatusNoContent {
			t.Fatalf("newcomer's own first row: %d %q, want 204", code, msg)
		}
		if r, ok := heldRow("newcomer"); !ok || len(r.Cells) != 1 || r.Cells[0].AvailMbps != 7 {
			t.Fatalf("newcomer's row: %+v %v, want it held", r, ok)
		}
	})

	t.Run("a restarted server is filled at once", func(t *testing.T) {
		f := (leader + 1) % n
		others := []string{}
		before := map[string]uint64{}
		for i := range n {
			if i != f {
				others = append(others, c.Name(i))
				before[c.Name(i)] = c.Agent(i).OwnNetRow().V
			}
		}
		c.Kill(f)
		c.Restart(f)
		restarted := time.Now()
		testcluster.WaitFor(t, 30*time.Second, "the restarted server to hold the others' rows", func() bool {
			return holdsRows(c.Agent(f), others)
		}, func() string { return fmt.Sprintf("it holds %+v", c.Agent(f).NetRows()) })
		t.Logf("restarted %s holds %v's rows %v after its restart (refresh: 1h)", c.Name(f), others, time.Since(restarted).Round(time.Millisecond))
		for i := range n {
			if i != f {
				if v := c.Agent(i).OwnNetRow().V; v != before[c.Name(i)] {
					t.Logf("%s's row changed meanwhile (v%d to v%d): the change path may have carried it", c.Name(i), before[c.Name(i)], v)
				}
			}
		}
		testcluster.WaitFor(t, 30*time.Second, "GET /v1/net on the restarted server to list the others' links", func() bool {
			ps, err := c.Client(f).Net(ctx)
			return err == nil && bwLinks(netLinks(ps), others)
		})
	})
}
