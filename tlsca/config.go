package tlsca

import (
	"crypto/tls"
	"crypto/x509"
)

// ServerConfig is a TLS 1.3 server configuration presenting leaf and
// verifying client certificates against roots: auth is
// tls.RequireAndVerifyClientCert where only peers may connect (raft) and
// tls.VerifyClientCertIfGiven where a token inside TLS is also accepted
// (the HTTP API).
func ServerConfig(roots *x509.CertPool, leaf *Leaf, auth tls.ClientAuthType) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: auth,
		ClientCAs:  roots,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return leaf.Get()
		},
	}
}

// ClientConfig is a TLS 1.3 client configuration verifying the server
// against roots and, when leaf is not nil, presenting it. serverName, when
// not empty, is the name the server's certificate must carry (agents use
// AgentServerName between themselves); empty takes the dialled host.
func ClientConfig(roots *x509.CertPool, leaf *Leaf, serverName string) *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: roots, ServerName: serverName}
	if leaf != nil {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return leaf.Get()
		}
	}
	return c
}
