package agent

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/tlsca"
)

// TLSFiles replace the CA derived from the cluster token with a site's
// own (--tls-ca-file, --tls-cert-file, --tls-key-file). All empty: the
// derived CA is trusted and the agent issues its own leaf from it.
type TLSFiles struct {
	// CAFile holds the trusted CA certificates (PEM; several during a
	// rotation). Empty: the CA derived from the token.
	CAFile string
	// CertFile and KeyFile are this agent's certificate and key. Empty: a
	// leaf issued from the derived CA at start, renewed at half-life.
	CertFile, KeyFile string
}

// tlsState is what every TLS listener and client of the agent shares.
type tlsState struct {
	cas   []*x509.Certificate
	roots *x509.CertPool
	// apiClients verifies the API's client certificates: the trusted CAs
	// and, with a site CA, the token's derived CA as well, which is how a
	// CLI holding the token proves it without sending it (it mints a
	// client certificate from that CA). Such a certificate is worth what
	// the token is, no more.
	apiClients *x509.CertPool
	// tokenCA, set with a site CA, is the token's derived CA that
	// apiClients trusts beside it: a certificate it issued authenticates
	// only as the CLI's (serverTLS), so an agent's leaf of the token's CA,
	// retired by a rotation to the site's, is not a credential any more.
	tokenCA *x509.Certificate
	leaf    *tlsca.Leaf
	// issued is true when leaf comes from the derived CA (so it can be
	// reissued with the address gossip settles on).
	issued bool
	// peer is the transport of agent-to-agent HTTP calls: mutual TLS,
	// connections kept alive and reused.
	peer *http.Transport
}

// loadTLS builds the agent's trust and certificate from its config, or
// says in one line what is wrong, before anything listens.
func loadTLS(cfg *Config, now func() time.Time) (*tlsState, error) {
	f := cfg.TLS
	st := &tlsState{}
	derived, err := tlsca.DeriveCA(cfg.Token)
	if err != nil {
		return nil, err
	}
	if f.CAFile != "" {
		cas, err := tlsca.LoadCAFile(f.CAFile, now())
		if err != nil {
			return nil, fmt.Errorf("--tls-ca-file: %w", err)
		}
		st.cas = cas
	} else {
		st.cas = []*x509.Certificate{derived.Cert}
	}
	st.roots = tlsca.Pool(st.cas...)
	st.apiClients = st.roots
	if f.CAFile != "" {
		st.apiClients = tlsca.Pool(append(slices.Clone(st.cas), derived.Cert)...)
		if !slices.ContainsFunc(st.cas, derived.Cert.Equal) {
			st.tokenCA = derived.Cert // trusted for the CLI's proof only, not as a site CA
		}
	}
	switch {
	case f.CertFile != "" || f.KeyFile != "":
		if f.CertFile == "" || f.KeyFile == "" {
			return nil, errors.New("--tls-cert-file and --tls-key-file go together: pass both, or neither to issue a certificate from the token's CA")
		}
		kp, err := tlsca.LoadKeyPair(f.CertFile, f.KeyFile, now())
		if err != nil {
			return nil, fmt.Errorf("--tls-cert-file: %w", err)
		}
		st.leaf = tlsca.FixedLeaf(kp)
	default:
		l, err := tlsca.IssuedLeaf(derived, tlsca.AgentRequest(cfg.Name, cfg.advertise(), cfg.LeafTTL), now)
		if err != nil {
			return nil, err
		}
		st.leaf, st.issued = l, true
	}
	own, err := st.leaf.Get()
	if err != nil {
		return nil, err
	}
	if err := tlsca.Verify(own.Leaf, st.roots, now()); err != nil {
		return nil, fmt.Errorf("this agent's certificate does not verify against the trusted CAs (peers would refuse it): %w; "+
			"put its CA in --tls-ca-file", err)
	}
	if err := own.Leaf.VerifyHostname(tlsca.AgentServerName); err != nil {
		return nil, fmt.Errorf("this agent's certificate lacks the name %s that agents check: make it with 'shoal tls cert create'", tlsca.AgentServerName)
	}
	st.peer = &http.Transport{
		TLSClientConfig:     tlsca.ClientConfig(st.roots, st.leaf, tlsca.AgentServerName),
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return st, nil
}

// ownName is the node name this agent's certificate carries (its common
// name), which servers hold its network rows to.
func (s *tlsState) ownName() string {
	c, err := s.leaf.Get()
	if err != nil || c.Leaf == nil {
		return ""
	}
	return c.Leaf.Subject.CommonName
}

// serverTLS is the HTTP API's TLS configuration: a client certificate of a
// trusted CA, or of the token's derived CA (apiClients), authenticates a
// caller; a caller without one may still present the token, inside TLS
// (scripts and older CLIs; the CLI itself never sends it).
func (s *tlsState) serverTLS() *tls.Config {
	c := tlsca.ServerConfig(s.apiClients, s.leaf, tls.VerifyClientCertIfGiven)
	if tokenCA := s.tokenCA; tokenCA != nil {
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) == 0 {
				return nil
			}
			for _, chain := range cs.VerifiedChains {
				if !chain[len(chain)-1].Equal(tokenCA) {
					return nil // a site CA's certificate
				}
			}
			if cn := cs.VerifiedChains[0][0].Subject.CommonName; cn != tlsca.CLIClientName {
				return fmt.Errorf("client certificate %q of the token's CA: with a site CA only the CLI's (%s) authenticates", cn, tlsca.CLIClientName)
			}
			return nil
		}
	}
	return c
}

// CAFileName is the public file, under the data dir, holding the CA
// certificates a job's `shoal rsh` verifies its agent against. It holds
// no key: jobs can check the agent, not mint certificates.
const CAFileName = "ca.pem"

// caFile is where, under dataDir, jobs read the trusted CA certificates.
func caFile(dataDir string) string { return filepath.Join(dataDir, CAFileName) }

// writeCAFile writes the trusted CA certificates to path, where jobs can read them.
func (s *tlsState) writeCAFile(path string) error {
	pem := s.caPEM()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem, 0o644); err != nil {
		return fmt.Errorf("write the CA certificate for jobs: %w", err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil { // whatever the umask
		return fmt.Errorf("write the CA certificate for jobs: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write the CA certificate for jobs: %w", err)
	}
	return nil
}

// caCerts is the public CA certificates as jobs get them in their
// environment (SHOAL_CA_CERTS): base64 of the PEM, one line that MPI
// launchers forward like any other variable. Unlike ca.pem it needs no
// search permission on the data dir.
func (s *tlsState) caCerts() string { return base64.StdEncoding.EncodeToString(s.caPEM()) }

// settleTLS reissues a derived leaf once gossip has settled the advertise
// address (so a CLI may reach the agent by it) and writes the public CA
// file for jobs.
func (a *Agent) settleTLS() error {
	if a.tls.issued {
		if err := a.tls.leaf.Reissue(tlsca.AgentRequest(a.cfg.Name, a.advertiseIP(), a.cfg.LeafTTL)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(a.cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	return a.tls.writeCAFile(caFile(a.cfg.DataDir))
}

// caPEM is the trusted CA certificates as PEM (public).
func (s *tlsState) caPEM() []byte {
	var out []byte
	for _, c := range s.cas {
		out = append(out, tlsca.CertPEM(c)...)
	}
	return out
}
