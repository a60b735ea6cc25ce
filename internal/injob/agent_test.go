package injob

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
)

// TestAgentPrefersTheSocket: `shoal rsh` and `shoal progress` reach
// their agent over its local socket, where the kernel names the calling
// process, and over HTTPS only when the socket is off or out of reach.
func TestAgentPrefersTheSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "shoal.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("SHOAL_CA_CERTS", "")
	t.Setenv("SHOAL_CA_FILE", "")

	t.Setenv("SHOAL_AGENT_SOCK", sock)
	t.Setenv("SHOAL_AGENT_ADDR", "https://127.0.0.1:7948")
	if c, err := Agent(); err != nil || c.Socket != sock {
		t.Errorf("socket and address: %+v, %v; want the socket %s", c, err, sock)
	}
	t.Setenv("SHOAL_AGENT_SOCK", filepath.Join(t.TempDir(), "none.sock"))
	if _, err := Agent(); err == nil || errors.Is(err, ErrNotInJob) {
		t.Errorf("an unreachable socket and an address: %v; want the HTTPS client's error (no CA to verify with)", err)
	}
	t.Setenv("SHOAL_AGENT_ADDR", "")
	if _, err := Agent(); !errors.Is(err, ErrNotInJob) {
		t.Errorf("an unreachable socket and no address: %v; want ErrNotInJob", err)
	}
}
