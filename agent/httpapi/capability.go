package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// A job capability lets the processes of one job attempt launch that
// attempt's commands on its own nodes (what `shoal rsh` does for MPI), and
// nothing else. It is signed with a key derived from the cluster token, so
// any agent can check it, and the job's processes never see the token itself.

// Attempt names one attempt of a job: what a job capability grants.
type Attempt struct {
	Job     uint64
	Attempt int
}

// JobCapability is the capability of attempt k, signed with key (Config.CapabilityKey).
func JobCapability(key []byte, k Attempt) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%d/%d", k.Job, k.Attempt)
	return fmt.Sprintf("%d.%d.%s", k.Job, k.Attempt, hex.EncodeToString(m.Sum(nil)))
}

// checkCapability returns the attempt a capability grants, or an error.
func checkCapability(key []byte, c string) (Attempt, error) {
	parts := strings.Split(c, ".")
	if len(parts) != 3 {
		return Attempt{}, fmt.Errorf("malformed job capability")
	}
	id, err1 := strconv.ParseUint(parts[0], 10, 64)
	att, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return Attempt{}, fmt.Errorf("malformed job capability")
	}
	k := Attempt{Job: id, Attempt: att}
	if !hmac.Equal([]byte(JobCapability(key, k)), []byte(c)) {
		return Attempt{}, fmt.Errorf("job capability does not verify")
	}
	return k, nil
}

// tokenOK compares a presented token with the cluster's in constant time.
func tokenOK(presented, token string) bool {
	return subtle.ConstantTimeCompare([]byte(presented), []byte(token)) == 1
}

// certAuthed reports whether r came over TLS with a client certificate
// that chains to a trusted CA: another agent, or a CLI holding the token
// or a site certificate. Such a caller is an administrator, like a holder
// of the token.
func certAuthed(r *http.Request) bool {
	return r.TLS != nil && len(r.TLS.VerifiedChains) > 0
}

// authTokenOrJob admits a request with a client certificate of the
// cluster's CA, the cluster token or a job capability. It returns the attempt a capability grants (nil for the
// token) and false after answering 401 itself.
func (s *Server) authTokenOrJob(w http.ResponseWriter, r *http.Request) (*Attempt, bool) {
	if certAuthed(r) {
		return nil, true
	}
	auth := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(auth, "Bearer "); ok && tokenOK(tok, s.cfg.Token) {
		return nil, true
	}
	if c, ok := strings.CutPrefix(auth, "Job "); ok {
		k, err := checkCapability(s.cfg.CapabilityKey, c)
		if err != nil {
			writeErr(w, http.StatusUnauthorized, err.Error())
			return nil, false
		}
		return &k, true
	}
	writeErr(w, http.StatusUnauthorized, "missing or wrong cluster token or job capability")
	return nil, false
}
