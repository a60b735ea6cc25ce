package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// One cluster token is the only secret an operator handles. Everything
// else is derived from it with a label, so that a leaked gossip key does
// not reveal the API token and the other way round.

// NewToken returns a fresh random cluster token.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ReadTokenFile reads a token file, refusing an empty one and warning (by
// error) about none; surrounding whitespace is ignored.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty: create one with 'shoal keygen > %s'", path, path)
	}
	if len(tok) < 16 {
		return "", fmt.Errorf("token in %s has %d characters; use at least 16 ('shoal keygen' makes 43)", path, len(tok))
	}
	return tok, nil
}

func derive(token, label string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("shoal/" + label + "/v1"))
	return m.Sum(nil)
}

// GossipKey is the AES-256 key memberlist encrypts gossip with.
func GossipKey(token string) []byte { return derive(token, "gossip") }
