package agent

import (
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/testcluster/twins"
)

// A raft backend of the agent's own binds no raft port, so the port it
// advertises must be given: 0 would leave the node without a raft
// address in gossip.
func TestConfigRaftBackendNeedsAPort(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Name, cfg.DataDir, cfg.Token = "n0", t.TempDir(), "tok"
	cfg.RaftBackend = twins.NewNetwork().Raft("n0")
	cfg.RaftPort = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "set RaftPort") {
		t.Fatalf("Validate() = %v, want the missing raft port named", err)
	}
	cfg.RaftPort = 20000
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate() = %v with a raft port", err)
	}
}
