package tlsca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"time"
)

// caLabel is the HKDF info string of the derived CA's key. Changing it
// changes every cluster's CA: it is part of the wire contract.
const caLabel = "shoal/cluster-ca/v1"

// The derived CA's fixed template. Every field is constant so that every
// holder of the token builds the same certificate, byte for byte (the
// signature is ECDSA's deterministic RFC 6979 form). The validity is wide on purpose: the
// token, not the calendar, bounds the CA's life; leaves are short-lived.
var (
	derivedNotBefore = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	derivedNotAfter  = time.Date(2124, 1, 1, 0, 0, 0, 0, time.UTC)
)

// DerivedCAName is the derived CA's common name.
const DerivedCAName = "shoal cluster CA (derived from the cluster token)"

// DeriveCA returns the cluster CA of a token: the same token always gives
// the same key and certificate; another token gives another CA.
func DeriveCA(token string) (*CA, error) {
	if len(token) < 16 {
		return nil, fmt.Errorf("derive cluster CA: token has %d characters, need at least 16", len(token))
	}
	key, err := deriveKey(token)
	if err != nil {
		return nil, err
	}
	pub := &key.PublicKey
	id := keyID(pub)
	// The serial is taken from the key's ID: stable, and two clusters'
	// CAs do not share one.
	tmpl := &x509.Certificate{
		SerialNumber:          new(big.Int).SetBytes(id[:16]),
		Subject:               pkix.Name{CommonName: DerivedCAName, Organization: []string{"shoal"}},
		NotBefore:             derivedNotBefore,
		NotAfter:              derivedNotAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
		SubjectKeyId:          id,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, deterministic{key})
	if err != nil {
		return nil, fmt.Errorf("derive cluster CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse derived CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// NewCA makes a fresh CA with a random key, for sites that keep their CA
// in files (`shoal tls ca create`).
func NewCA(name string, now time.Time, ttl time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	pub := &key.PublicKey
	serial, err := randSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"shoal"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(ttl),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
		SubjectKeyId:          keyID(pub),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// deriveKey turns the token into a P-256 private key: HKDF-SHA256 with
// the label gives 32 bytes, taken as the scalar; the rare value outside
// [1, n-1] (odds about 2^-32) moves on to the next counter.
func deriveKey(token string) (*ecdsa.PrivateKey, error) {
	for i := 0; i < 16; i++ {
		d, err := hkdf.Key(sha256.New, []byte(token), nil, fmt.Sprintf("%s/%d", caLabel, i), 32)
		if err != nil {
			return nil, fmt.Errorf("derive cluster CA key: %w", err)
		}
		if key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d); err == nil {
			return key, nil
		}
	}
	return nil, fmt.Errorf("derive cluster CA key: no valid scalar in 16 tries")
}

// deterministic signs without randomness (RFC 6979), so the derived CA's
// certificate is the same on every node.
type deterministic struct{ k *ecdsa.PrivateKey }

func (d deterministic) Public() crypto.PublicKey { return d.k.Public() }

func (d deterministic) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return d.k.Sign(nil, digest, opts)
}

func keyID(pub *ecdsa.PublicKey) []byte {
	b, _ := pub.Bytes()
	h := sha256.Sum256(b)
	return h[:20]
}

func randSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("random serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}
