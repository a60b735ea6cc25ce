// Package tlsca derives, issues and loads the certificates shoal's agents
// and CLI use for TLS 1.3 with mutual authentication.
//
// By default there is no PKI to run: the cluster token deterministically
// derives the cluster CA (DeriveCA: HKDF-SHA256 of the token with a label
// gives a P-256 key; the certificate template is fixed), so every holder
// of the token has the same CA and can mint certificates, which is exactly
// the power the token already gives. Each agent issues its own short-lived
// leaf (CA.Issue) at start and renews it before it expires (Leaf).
//
// Sites with a PKI load their files instead (LoadCAFile, LoadKeyPair), and
// NewCA makes such files for sites that want them (`shoal tls ca create`).
//
//	ca, _ := tlsca.DeriveCA(token)
//	leaf, _ := tlsca.IssuedLeaf(ca, tlsca.AgentRequest("node1", "10.0.0.1", 0), time.Now)
//	srv := tlsca.ServerConfig(tlsca.Pool(ca.Cert), leaf, tls.RequireAndVerifyClientCert)
//	cli := tlsca.ClientConfig(tlsca.Pool(ca.Cert), leaf, tlsca.AgentServerName)
//
// Everything here is a pure function of its inputs (the clock is a
// parameter) except the random keys of leaves and of NewCA.
package tlsca
