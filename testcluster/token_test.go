package testcluster

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// sourceToken is the token every test cluster used to share, as written in
// this package's source: anyone who can read the source knows it.
const sourceToken = "testcluster-token-0123456789abcdef"

// TestClusterTokenIsNotInTheSource is the attack of a local user on the
// test clusters that listen on loopback while the suite runs (as root, on
// shared machines): holding the token written in the source, they submit
// a job as root. Every cluster must have a fresh token of its own, so the
// submit is refused before TLS is through.
func TestClusterTokenIsNotInTheSource(t *testing.T) {
	t.Parallel()
	c := New(t, 1, Options{})
	c.WaitLeader(45 * time.Second)
	base := c.Client(0).Base
	stranger := api.NewTLSClient(base, sourceToken, ClientTLS(sourceToken))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := stranger.Submit(ctx, api.SubmitRequest{RequestID: t.Name(), Owner: "root",
		Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: "/"}})
	if err == nil {
		t.Fatalf("the token written in the source submitted job %d as root to a test cluster", res.ID)
	}
	t.Logf("refused: %v", err)
	if tok := c.Token(); tok == sourceToken || len(tok) < 43 {
		t.Errorf("cluster token %q: want a fresh 256-bit one", tok)
	}
	if other := NewToken(t); other == c.Token() {
		t.Errorf("two tokens are the same: %q", other)
	}
}
