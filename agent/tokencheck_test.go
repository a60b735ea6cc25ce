package agent_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/tlsca"
)

// TestCheckTokenForms: every token `shoal keygen` makes passes, and so do
// hex and base64 of random bytes; what a person types does not.
func TestCheckTokenForms(t *testing.T) {
	t.Parallel()
	for range 5000 {
		tok, err := agent.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if err := agent.CheckToken(tok); err != nil {
			t.Fatalf("keygen token %q refused: %v", tok, err)
		}
	}
	b := make([]byte, 32)
	for range 200 {
		rand.Read(b)
		for _, tok := range []string{hex.EncodeToString(b[:16]), hex.EncodeToString(b), base64.StdEncoding.EncodeToString(b),
			base64.RawStdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b[:24])} {
			if err := agent.CheckToken(tok); err != nil {
				t.Fatalf("random token %q refused: %v", tok, err)
			}
		}
	}
	for _, weak := range []string{
		"physics-lab-cluster-2024", "Physics-Lab-Cluster-2024!", "correct horse battery staple",
		"testcluster-token-0123456789abcdef", "0123456789abcdef0123456789", "0123456789abcdef0123456789abcdef",
		"deadbeefdeadbeefdeadbeefdeadbeef", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "0123456789abcdef", "Tr0ub4dor&3-Tr0ub4dor&3",
	} {
		if err := agent.CheckToken(weak); !errors.Is(err, agent.ErrWeakToken) {
			t.Errorf("%q: %v, want refused as weak", weak, err)
		}
	}
}

// TestWeakTokenIsRefusedAtStart is the offline attack on a token a person
// chose: from the cluster's public CA certificate alone, a few guesses in
// the style of the site find the token, which is root on every node. An
// agent must refuse to start with such a token, saying how to make one.
func TestWeakTokenIsRefusedAtStart(t *testing.T) {
	t.Parallel()
	const weak = "physics-lab-cluster-2024"
	public, err := tlsca.DeriveCA(weak)
	if err != nil {
		t.Fatal(err)
	}
	guesses := 0
	recovered := ""
	for _, lab := range []string{"cs", "hpc", "math", "physics", "chem"} {
		for _, what := range []string{"lab-cluster", "cluster", "lab-shoal", "shoal"} {
			for year := 2020; year <= 2026 && recovered == ""; year++ {
				guess := fmt.Sprintf("%s-%s-%d", lab, what, year)
				guesses++
				if ca, err := tlsca.DeriveCA(guess); err == nil && bytes.Equal(ca.Cert.Raw, public.Cert.Raw) {
					recovered = guess
				}
			}
		}
	}
	if recovered != weak {
		t.Fatalf("the offline guesses did not find the token (%d tried)", guesses)
	}
	t.Logf("the token fell to the public CA certificate in %d offline guesses", guesses)

	cfg := agent.DefaultConfig()
	cfg.Name, cfg.DataDir, cfg.Token = "weak", t.TempDir(), recovered
	cfg.BindAddr, cfg.GossipPort, cfg.RaftPort, cfg.HTTPPort, cfg.Probes.Port = "127.0.0.1", 0, 0, 0, 0
	cfg.Socket = ""
	cfg.Logger = slog.New(slog.DiscardHandler)
	a, err := agent.New(cfg)
	if err == nil {
		a.Shutdown(agent.Abrupt)
		t.Fatal("an agent started with a token recovered offline from the public CA certificate")
	}
	if !errors.Is(err, agent.ErrWeakToken) || !strings.Contains(err.Error(), "shoal keygen") || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal %q: want one line naming 'shoal keygen'", err)
	}
}
