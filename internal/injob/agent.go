package injob

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/tlsca"
)

// ErrNotInJob is the answer of Capability and Agent outside a job.
var ErrNotInJob = errors.New("runs only inside a shoal job (SHOAL_JOB_CAP_FILE is not set)")

// Capability is the attempt's capability as a process inside a job
// finds it: in the file its agent names in SHOAL_JOB_CAP_FILE (the owner's,
// mode 0600), or in SHOAL_JOB_CAP where a caller set it by hand. Agents no
// longer put it in the environment, which a job's output can show.
func Capability() (string, error) {
	if f := os.Getenv("SHOAL_JOB_CAP_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("read the job capability: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if c := os.Getenv("SHOAL_JOB_CAP"); c != "" {
		return c, nil
	}
	return "", ErrNotInJob
}

// Agent is the client of a process inside a job for its node's agent.
// The local socket (SHOAL_AGENT_SOCK) comes first: there the kernel names
// the calling process itself (SO_PEERCRED). The HTTPS API
// (SHOAL_AGENT_ADDR) serves an agent without a socket, or a process that
// cannot reach it (a container without the socket's directory); there the
// agent looks the caller's TCP socket up in the kernel's table and takes
// the capability only from a socket of the job's owner, so root's
// processes act there on root's jobs only.
func Agent() (*api.Client, error) {
	if sock := os.Getenv("SHOAL_AGENT_SOCK"); sock != "" {
		if c, err := net.DialTimeout("unix", sock, 5*time.Second); err == nil {
			c.Close()
			return api.NewClient(api.SocketScheme+sock, ""), nil
		}
	}
	addr := os.Getenv("SHOAL_AGENT_ADDR")
	if addr == "" {
		return nil, ErrNotInJob
	}
	return Client(addr)
}

// Client is the HTTPS client of a process inside a job (`shoal rsh`,
// `shoal progress`): it verifies its agent against the public CA
// certificates the agent gave it, by value (SHOAL_CA_CERTS, base64 of the
// PEM: a job of any user can read its own environment, whatever the data
// dir's mode) or as a file (SHOAL_CA_FILE), and authenticates with the
// attempt's capability, never the token.
func Client(addr string) (*api.Client, error) {
	var cas []*x509.Certificate
	if v := os.Getenv("SHOAL_CA_CERTS"); v != "" {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("SHOAL_CA_CERTS is not base64: %w", err)
		}
		if cas, err = tlsca.ParseCAs(b, time.Now()); err != nil {
			return nil, fmt.Errorf("SHOAL_CA_CERTS: %w", err)
		}
	} else {
		caFile := os.Getenv("SHOAL_CA_FILE")
		if caFile == "" {
			return nil, fmt.Errorf("neither SHOAL_CA_CERTS nor SHOAL_CA_FILE is set: run this inside a shoal job")
		}
		var err error
		if cas, err = tlsca.LoadCAFile(caFile, time.Now()); err != nil {
			return nil, err
		}
	}
	return api.NewTLSClient(addr, "", tlsca.ClientConfig(tlsca.Pool(cas...), nil, tlsca.AgentServerName)), nil
}
