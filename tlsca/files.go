package tlsca

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"
)

// LoadCAFile reads every certificate of a PEM file of CA certificates (a
// file may hold several: during a rotation it holds the old CA and the
// new one). Each must be a CA and valid at now.
func LoadCAFile(path string, now time.Time) ([]*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CA file: %w", err)
	}
	certs, err := ParseCAs(b, now)
	if err != nil {
		return nil, fmt.Errorf("CA file %s: %w", path, err)
	}
	return certs, nil
}

// ParseCAs reads CA certificates from PEM bytes; each must be a CA and
// valid at now.
func ParseCAs(b []byte, now time.Time) ([]*x509.Certificate, error) {
	certs, err := parseCerts(b)
	if err != nil {
		return nil, err
	}
	for _, c := range certs {
		if !c.IsCA {
			return nil, fmt.Errorf("certificate %q is not a CA certificate (pass the CA's certificate, not a node's)", c.Subject.CommonName)
		}
		if err := CheckValidity(c, now); err != nil {
			return nil, err
		}
	}
	return certs, nil
}

func parseCerts(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate in it")
	}
	return certs, nil
}

// LoadKeyPair reads a certificate and its key, refusing a key that does
// not match and a certificate not valid at now.
func LoadKeyPair(certFile, keyFile string, now time.Time) (tls.Certificate, error) {
	if certFile == "" || keyFile == "" {
		return tls.Certificate{}, errors.New("a certificate needs both its file and its key file")
	}
	kp, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load certificate %s with key %s: %w", certFile, keyFile, err)
	}
	if err := CheckValidity(kp.Leaf, now); err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", certFile, err)
	}
	return kp, nil
}

// LoadCA reads a CA certificate and its key (for `shoal tls cert create`).
func LoadCA(certFile, keyFile string, now time.Time) (*CA, error) {
	kp, err := LoadKeyPair(certFile, keyFile, now)
	if err != nil {
		return nil, err
	}
	if !kp.Leaf.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", certFile)
	}
	signer, ok := kp.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("the key in %s cannot sign", keyFile)
	}
	return &CA{Cert: kp.Leaf, Key: signer}, nil
}
