package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

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
