package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestJobCapabilityGrantsOneAttempt: a capability verifies under its own
// key only, for the attempt it names only; anything edited or malformed
// is refused.
func TestJobCapabilityGrantsOneAttempt(t *testing.T) {
	t.Parallel()
	key, other := []byte("key-one"), []byte("key-two")
	c := JobCapability(key, Attempt{Job: 7, Attempt: 2})
	if k, err := checkCapability(key, c); err != nil || k != (Attempt{Job: 7, Attempt: 2}) {
		t.Fatalf("own capability: %v %v, want job 7 attempt 2", k, err)
	}
	sig := c[strings.LastIndex(c, ".")+1:]
	for name, bad := range map[string]string{
		"another cluster's key": JobCapability(other, Attempt{Job: 7, Attempt: 2}),
		"another attempt":       "7.3." + sig,
		"another job":           "8.2." + sig,
		"no signature":          "7.2",
		"not numbers":           "x.y." + sig,
		"empty":                 "",
	} {
		if k, err := checkCapability(key, bad); err == nil {
			t.Errorf("%s: %q verified as %v", name, bad, k)
		}
	}
}

// TestSingleUserRefusal: an agent that is not root takes changes over the
// socket only from its own user; reads stay open; root's agent refuses nobody.
func TestSingleUserRefusal(t *testing.T) {
	t.Parallel()
	alice := Identity{UID: 1000, Name: "alice"}
	for _, c := range []struct {
		self   Identity
		uid    uint32
		method string
		refuse bool
	}{
		{alice, 1001, http.MethodPost, true},
		{alice, 0, http.MethodPost, true}, // root too: the agent could only run it as alice
		{alice, 1000, http.MethodPost, false},
		{alice, 1001, http.MethodGet, false},
		{alice, 1001, http.MethodHead, false},
		{Identity{UID: 0, Name: "root"}, 1001, http.MethodPost, false},
	} {
		why := singleUserRefusal(c.self, c.uid, c.method)
		if (why != "") != c.refuse {
			t.Errorf("agent %v, uid %d, %s: refusal %q, want refused=%v", c.self, c.uid, c.method, why, c.refuse)
		}
	}
}

// TestHiddenEnvKeepsNamesOnly: another user's job shows its variables'
// names, never their values.
func TestHiddenEnvKeepsNamesOnly(t *testing.T) {
	t.Parallel()
	got := hiddenEnv([]string{"API_KEY=s3cret", "EMPTY=", "ODD"})
	want := []string{"API_KEY=(hidden)", "EMPTY=(hidden)", "ODD=(hidden)"}
	if !slices.Equal(got, want) {
		t.Errorf("hiddenEnv = %q, want %q", got, want)
	}
	if hiddenEnv(nil) != nil {
		t.Error("hiddenEnv(nil) is not nil: a job without env would print []")
	}
}
