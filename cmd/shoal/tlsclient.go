package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/tlsca"
)

// cliLeafTTL is the life of the client certificate a CLI holding the
// token mints for itself: one command's worth, with room for `logs -f`.
const cliLeafTTL = 12 * time.Hour

// tlsFlags are the CLI's certificate flags; without them the token's
// derived CA verifies the agent and a certificate minted from it in
// memory authenticates the CLI, so the token itself never crosses the wire.
func tlsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ca-file", EnvVars: []string{"SHOAL_CA_FILE"}, Usage: "verify the agent against the CA certificates in PEM `FILE` (default: the CA derived from the token)"},
		&cli.StringFlag{Name: "cert-file", EnvVars: []string{"SHOAL_CERT_FILE"}, Usage: "authenticate with this client certificate, PEM `FILE` (default: one minted from the token's CA)"},
		&cli.StringFlag{Name: "key-file", EnvVars: []string{"SHOAL_KEY_FILE"}, Usage: "the key of --cert-file, PEM `FILE`"},
	}
}

// clientTLS builds the CLI's TLS configuration. The CLI proves it holds the
// token with a client certificate minted in memory from the token's derived
// CA, also when the agent is verified against a site CA (--ca-file): the
// agents take that CA's certificates from API clients too. The token itself
// is never sent, not even inside TLS: a server the CLI was pointed at by
// mistake (or by someone else's script) learns nothing it could reuse.
func clientTLS(token, caFile, certFile, keyFile string, now time.Time) (*tls.Config, error) {
	var roots []*x509.Certificate
	var derived *tlsca.CA
	if token != "" {
		ca, err := tlsca.DeriveCA(token)
		if err != nil {
			return nil, err
		}
		derived = ca
	}
	switch {
	case caFile != "":
		cas, err := tlsca.LoadCAFile(caFile, now)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		roots = cas
	case derived != nil:
		roots = []*x509.Certificate{derived.Cert}
	default:
		return nil, fmt.Errorf("nothing to verify the agent with: pass --token-file (its CA) or --ca-file")
	}
	pool := tlsca.Pool(roots...)
	switch {
	case certFile != "" || keyFile != "":
		kp, err := tlsca.LoadKeyPair(certFile, keyFile, now)
		if err != nil {
			return nil, fmt.Errorf("--cert-file/--key-file: %w", err)
		}
		return tlsca.ClientConfig(pool, tlsca.FixedLeaf(kp), ""), nil
	case derived != nil:
		leaf, err := derived.Issue(tlsca.LeafRequest{Name: tlsca.CLIClientName, TTL: cliLeafTTL}, now)
		if err != nil {
			return nil, err
		}
		return tlsca.ClientConfig(pool, tlsca.FixedLeaf(leaf), ""), nil
	}
	return tlsca.ClientConfig(pool, nil, ""), nil
}

// jobClient is the client of a process inside a job (`shoal rsh`,
// `shoal progress`): it verifies its agent against the public CA
// certificates the agent gave it, by value (SHOAL_CA_CERTS, base64 of the
// PEM: a job of any user can read its own environment, whatever the data
// dir's mode) or as a file (SHOAL_CA_FILE), and authenticates with the
// attempt's capability, never the token.
func jobClient(addr string) (*api.Client, error) {
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

// jobAgent is the client of a process inside a job for its node's agent.
// The local socket (SHOAL_AGENT_SOCK) comes first: there the kernel names
// the calling process itself (SO_PEERCRED). The HTTPS API
// (SHOAL_AGENT_ADDR) serves an agent without a socket, or a process that
// cannot reach it (a container without the socket's directory); there the
// agent looks the caller's TCP socket up in the kernel's table and takes
// the capability only from a socket of the job's owner, so root's
// processes act there on root's jobs only.
func jobAgent() (*api.Client, error) {
	if sock := os.Getenv("SHOAL_AGENT_SOCK"); sock != "" {
		if c, err := net.DialTimeout("unix", sock, 5*time.Second); err == nil {
			c.Close()
			return api.NewClient(api.SocketScheme+sock, ""), nil
		}
	}
	addr := os.Getenv("SHOAL_AGENT_ADDR")
	if addr == "" {
		return nil, errNotInJob
	}
	return jobClient(addr)
}

// jobCapability is the attempt's capability as a process inside a job
// finds it: in the file its agent names in SHOAL_JOB_CAP_FILE (the owner's,
// mode 0600), or in SHOAL_JOB_CAP where a caller set it by hand. Agents no
// longer put it in the environment, which a job's output can show.
func jobCapability() (string, error) {
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
	return "", errNotInJob
}

// errNotInJob is jobCapability's answer outside a job.
var errNotInJob = errors.New("runs only inside a shoal job (SHOAL_JOB_CAP_FILE is not set)")
