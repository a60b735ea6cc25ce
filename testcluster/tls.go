package testcluster

import (
	"crypto/tls"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/tlsca"
)

// ClientTLS is a TLS configuration that verifies the agents of a cluster
// with token against the token's derived CA, presenting no certificate
// (the client sends the token inside TLS).
func ClientTLS(token string) *tls.Config {
	ca, err := tlsca.DeriveCA(token)
	if err != nil {
		panic(err) // test tokens are constants
	}
	return tlsca.ClientConfig(tlsca.Pool(ca.Cert), nil, "")
}

// CertTLS is ClientTLS presenting a certificate minted from the token's
// CA, as the CLI does, instead of sending the token.
func CertTLS(token string) *tls.Config {
	ca, err := tlsca.DeriveCA(token)
	if err != nil {
		panic(err)
	}
	leaf, err := ca.Issue(tlsca.LeafRequest{Name: "test-client", TTL: time.Hour}, time.Now())
	if err != nil {
		panic(err)
	}
	return tlsca.ClientConfig(tlsca.Pool(ca.Cert), tlsca.FixedLeaf(leaf), "")
}

func tokenClient(base, token string) *api.Client {
	return api.NewTLSClient(base, token, ClientTLS(token))
}
