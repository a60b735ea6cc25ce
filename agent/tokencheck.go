package agent

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"unicode"
)

// ErrWeakToken is a cluster token that may have fewer than 128 random
// bits. The token derives the cluster CA, whose certificate is public
// (jobs get it, `shoal tls ca export` prints it): anyone holding it can
// test guesses offline, as fast as they can derive keys, with no agent to
// see them. A human-chosen 16-character token fell in 33 guesses.
var ErrWeakToken = errors.New("the cluster token is weak: it is neither one 'shoal keygen' makes nor hex or base64 of at least 128 random bits, and anyone with the cluster's public CA certificate can guess it offline; make a new one with 'shoal keygen', copy it to every node and restart the cluster")

// minTokenBytes is the least randomness a token must encode: 128 bits.
const minTokenBytes = 16

// CheckToken refuses a token that does not look machine-made with at least
// 128 random bits. Entropy cannot be read off a string, so the rule is on
// its form: what `shoal keygen` makes (base64url of 32 random bytes), or
// hex of at least 32 digits (`openssl rand -hex 16`), or base64 of at
// least 16 bytes (`openssl rand -base64 32`), standard or URL alphabet,
// padded or not; and in every form nothing a person types instead: a
// base64 token mixes upper and lower case (a lower-case phrase such as
// "physics-lab-cluster-2024" is valid base64url), and no token repeats a
// short pattern or uses fewer than 8 distinct characters. A random
// keygen token fails this with a probability below one in a billion;
// hex or base64 of exactly 128 bits, about one in fifty thousand (make a
// new one).
func CheckToken(tok string) error {
	if repetitive(tok) {
		return ErrWeakToken
	}
	if isHex(tok) {
		if len(tok)/2 >= minTokenBytes {
			return nil
		}
		return ErrWeakToken
	}
	if n := base64Bytes(tok); n >= minTokenBytes && mixedCase(tok) {
		return nil
	}
	return ErrWeakToken
}

// repetitive says whether s uses fewer than 8 distinct characters or is a
// shorter string repeated ("deadbeefdeadbeef...", "abcabcabc").
func repetitive(s string) bool {
	seen := map[rune]bool{}
	for _, r := range s {
		seen[r] = true
	}
	if len(seen) < 8 {
		return true
	}
	for p := 1; p <= len(s)/2; p++ {
		if s[p:] == s[:len(s)-p] {
			return true
		}
	}
	return false
}

// isHex says whether s is hex digits of one case, an even number of them.
func isHex(s string) bool {
	if len(s)%2 != 0 || (strings.ToLower(s) != s && strings.ToUpper(s) != s) {
		return false
	}
	_, err := hex.DecodeString(strings.ToLower(s))
	return err == nil
}

// base64Bytes is how many bytes s encodes in any of base64's four forms,
// decoded strictly (unused trailing bits must be zero); 0 when it is none.
func base64Bytes(s string) int {
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.StdEncoding} {
		if b, err := enc.Strict().DecodeString(s); err == nil {
			return len(b)
		}
	}
	return 0
}

func mixedCase(s string) bool {
	return strings.IndexFunc(s, unicode.IsUpper) >= 0 && strings.IndexFunc(s, unicode.IsLower) >= 0
}
