package tlsca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"time"
)

// AgentServerName is a DNS name in every agent certificate shoal issues.
// Agents verify each other against it, so a site's certificates need not
// list every address a peer may be reached by (like Nomad's
// server.global.nomad).
const AgentServerName = "agent.shoal"

// CLIClientName is the common name of the client certificate a CLI holding
// the cluster token mints from the token's derived CA to prove it holds
// the token without sending it.
const CLIClientName = "shoal-cli"

// DefaultLeafTTL is the life of a leaf an agent issues itself; it renews
// it once half of that has passed.
const DefaultLeafTTL = 24 * time.Hour

// backdate is how far before "now" a leaf becomes valid, so that a peer
// whose clock is a few minutes behind still accepts it.
const backdate = 5 * time.Minute

// CA is a certificate authority: its certificate and, when this process
// may issue certificates, its key.
type CA struct {
	Cert *x509.Certificate
	// Key signs leaves; nil for a CA known only by its certificate.
	Key crypto.Signer
}

// LeafRequest says whom a leaf is for.
type LeafRequest struct {
	// Name is the node's name (common name and a DNS SAN when it is a
	// valid host name).
	Name string
	// IPs and DNS are further subject alternative names.
	IPs []net.IP
	DNS []string
	// TTL is the leaf's life. Default DefaultLeafTTL.
	TTL time.Duration
}

// AgentRequest is the request of an agent's own leaf: its name, the fixed
// AgentServerName, localhost, 127.0.0.1 and its advertise address (when
// known and not unspecified).
func AgentRequest(name, advertise string, ttl time.Duration) LeafRequest {
	r := LeafRequest{Name: name, DNS: []string{AgentServerName, "localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, TTL: ttl}
	if ip := net.ParseIP(advertise); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		r.IPs = append(r.IPs, ip)
	}
	return r
}

// Issue makes a leaf for req, valid for both server and client
// authentication, with a fresh P-256 key.
func (ca *CA) Issue(req LeafRequest, now time.Time) (tls.Certificate, error) {
	if ca.Key == nil {
		return tls.Certificate{}, errors.New("issue certificate: this CA has no key here")
	}
	if req.TTL <= 0 {
		req.TTL = DefaultLeafTTL
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate leaf key: %w", err)
	}
	serial, err := randSerial()
	if err != nil {
		return tls.Certificate{}, err
	}
	dns := append([]string(nil), req.DNS...)
	if req.Name != "" && validHostName(req.Name) {
		dns = append([]string{req.Name}, dns...)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: req.Name, Organization: []string{"shoal"}},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(req.TTL),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     dns,
		IPAddresses:  req.IPs,
	}
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("sign leaf for %q: %w", req.Name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("parse issued leaf: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// validHostName reports whether s may be a DNS SAN (letters, digits, '-'
// and '.'; no empty label).
func validHostName(s string) bool {
	if len(s) > 253 || s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	prevDot := false
	for _, c := range s {
		switch {
		case c == '.':
			if prevDot {
				return false
			}
			prevDot = true
			continue
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
		default:
			return false
		}
		prevDot = false
	}
	return true
}

// Pool returns a pool holding certs.
func Pool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// Verify checks that leaf chains to one of roots at now, for client or
// server use, and names it as a one-line error when it does not.
func Verify(leaf *x509.Certificate, roots *x509.CertPool, now time.Time) error {
	if err := CheckValidity(leaf, now); err != nil {
		return err
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fmt.Errorf("certificate %q is not signed by a trusted CA: %w", leaf.Subject.CommonName, err)
	}
	return nil
}

// CheckValidity says whether cert is valid at now.
func CheckValidity(cert *x509.Certificate, now time.Time) error {
	switch {
	case now.Before(cert.NotBefore):
		return fmt.Errorf("certificate %q is not valid yet: valid from %s (now %s); check the clock", cert.Subject.CommonName,
			cert.NotBefore.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case now.After(cert.NotAfter):
		return fmt.Errorf("certificate %q expired at %s (now %s): issue a new one", cert.Subject.CommonName,
			cert.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// CertPEM encodes a certificate as PEM.
func CertPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// KeyPEM encodes a private key as PKCS #8 PEM.
func KeyPEM(k crypto.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// DERPEM encodes a DER certificate as PEM.
func DERPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
