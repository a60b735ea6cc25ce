package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/tlsca"
)

// TestRotation_RollingNewCA rolls a new CA through a running 3-node
// cluster, one agent at a time, as the README's procedure says: (1) every
// agent trusts both CAs (--tls-ca-file with both), (2) every agent gets a
// certificate of the new CA, (3) every agent trusts only the new CA. After
// every single restart the cluster has a leader and takes writes through
// every node (forwarding, raft replication: mutual TLS between agents whose
// certificates come from different CAs); at the end the old CA is refused
// and nothing written along the way is lost.
func TestRotation_RollingNewCA(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 3, testcluster.Options{})
	c.WaitLeader(30 * time.Second)
	dir := t.TempDir()
	old, err := tlsca.DeriveCA(c.Token())
	if err != nil {
		t.Fatal(err)
	}
	neu, err := tlsca.NewCA("site CA", time.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	both := write("both.pem", append(tlsca.CertPEM(old.Cert), tlsca.CertPEM(neu.Cert)...))
	newOnly := write("new.pem", tlsca.CertPEM(neu.Cert))
	certs := make([][2]string, 3)
	for i := range 3 {
		leaf, err := neu.Issue(tlsca.AgentRequest(c.Name(i), "127.0.0.1", time.Hour), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		k, _ := tlsca.KeyPEM(leaf.PrivateKey)
		certs[i] = [2]string{write(c.Name(i)+".pem", tlsca.CertPEM(leaf.Leaf)), write(c.Name(i)+"-key.pem", k)}
	}
	trustBoth := tlsca.ClientConfig(tlsca.Pool(old.Cert, neu.Cert), nil, "")
	client := func(i int) *api.Client {
		return api.NewTLSClient("https://127.0.0.1:"+strconv.Itoa(c.Agent(i).HTTPPort()), c.Token(), trustBoth)
	}
	var written []string
	writeThroughEvery := func(stage string) {
		t.Helper()
		for i := range 3 {
			id := stage + "-via-" + c.Name(i)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := client(i).Submit(ctx, api.SubmitRequest{RequestID: id, Owner: "root", Spec: api.JobSpec{
				Cmd: []string{"true", id}, NP: 1, MPI: "none", Workdir: os.TempDir(), Oversubscribe: true}})
			cancel()
			if err != nil {
				t.Fatalf("%s: write through %s: %v\n%s", stage, c.Name(i), err, c.Describe())
			}
			written = append(written, id)
		}
	}
	roll := func(stage string, tf func(i int) agent.TLSFiles) {
		t.Helper()
		for i := range 3 {
			c.Stop(i)
			c.Reconfigure(i, func(cfg *agent.Config) { cfg.TLS = tf(i) })
			c.Restart(i)
			c.WaitLeader(60 * time.Second)
			writeThroughEvery(stage + "-" + c.Name(i))
		}
	}
	writeThroughEvery("before")
	roll("trust-both", func(int) agent.TLSFiles { return agent.TLSFiles{CAFile: both} })
	roll("new-cert", func(i int) agent.TLSFiles {
		return agent.TLSFiles{CAFile: both, CertFile: certs[i][0], KeyFile: certs[i][1]}
	})
	roll("new-only", func(i int) agent.TLSFiles {
		return agent.TLSFiles{CAFile: newOnly, CertFile: certs[i][0], KeyFile: certs[i][1]}
	})

	// The old CA is out: a certificate it issued no longer authenticates
	// (the agent refuses it; with no token the call gets nothing).
	ctx := context.Background()
	oldLeaf, _ := old.Issue(tlsca.LeafRequest{Name: "old-admin", TTL: time.Hour}, time.Now())
	oldCert := api.NewTLSClient(client(0).Base, "", tlsca.ClientConfig(tlsca.Pool(neu.Cert), tlsca.FixedLeaf(oldLeaf), ""))
	if ns, err := oldCert.Nodes(ctx); err == nil {
		t.Fatalf("a certificate of the retired CA read %d nodes", len(ns))
	}
	// And a client that trusts only the old CA refuses the agents.
	if _, err := api.NewTLSClient(client(0).Base, c.Token(), testcluster.ClientTLS(c.Token())).Nodes(ctx); err == nil {
		t.Fatal("a client trusting only the retired CA accepted an agent's new certificate")
	}
	jobs, err := client(1).Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != len(written) {
		t.Fatalf("%d jobs after the rotation, want the %d written along the way", len(jobs), len(written))
	}
	t.Logf("rotated 3 agents through 9 restarts; %d writes, each through every node, all kept", len(written))
}
