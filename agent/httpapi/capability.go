package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// A job capability lets the processes of one job attempt launch that
// attempt's commands on its own nodes (what `shoal rsh` does for MPI) and
// report its progress, as the job's owner, and nothing else. It is signed
// with a key derived from the cluster token, so any agent can check it, and
// the job's processes never see the token itself.
//
// What it proves: that the agents handed it to the processes of this one
// attempt, as placed in raft. The signature covers the job and attempt
// numbers, the owner, the raft index of the place_job entry that created
// the attempt and the placement and submission times, so a capability
// outlives neither its attempt nor its owner: after a snapshot restore sets
// the next job ID back, a job that gets an old ID again has another
// owner, index or time, and the old capability does not verify for it.
// An attempt recorded before shoal kept its raft index (an older snapshot)
// is bound to the rest; its processes get a fresh capability from the
// agent that runs them, and capabilities signed by older agents no longer
// verify.
//
// What it does not prove is who presents it: the agent also checks that
// the caller is a process of the job's owner on this node (callerIsOwner).

// Attempt names one attempt of a job: what a job capability grants.
type Attempt struct {
	Job     uint64
	Attempt int
}

// JobCapability is the capability of attempt att of job j, signed with key
// (Config.CapabilityKey).
func JobCapability(key []byte, j *raftfsm.Job, att *raftfsm.Attempt) string {
	return fmt.Sprintf("%d.%d.%s", j.ID, att.N, hex.EncodeToString(capabilityMAC(key, j, att)))
}

// capabilityMAC signs what a capability is bound to. The fields are
// separated by NUL, which none of them can hold.
func capabilityMAC(key []byte, j *raftfsm.Job, att *raftfsm.Attempt) []byte {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "shoal job capability 2\x00%d\x00%d\x00%s\x00%d\x00%d\x00%d",
		j.ID, att.N, j.Owner, att.PlacedIndex, att.PlacedAt.UnixNano(), j.SubmittedAt.UnixNano())
	return m.Sum(nil)
}

// errCapability is every refusal of a capability that does not verify: it
// says nothing of which part was wrong.
var errCapability = errors.New("job capability does not verify")

// checkCapability returns the attempt a capability grants and the job's
// owner, or an error. view reads the replicated state (Backend.View): the
// capability must match the attempt as this agent's state holds it.
func checkCapability(key []byte, c string, view func(func(*raftfsm.State))) (Attempt, string, error) {
	parts := strings.Split(c, ".")
	if len(parts) != 3 {
		return Attempt{}, "", fmt.Errorf("malformed job capability")
	}
	id, err1 := strconv.ParseUint(parts[0], 10, 64)
	n, err2 := strconv.Atoi(parts[1])
	sig, err3 := hex.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return Attempt{}, "", fmt.Errorf("malformed job capability")
	}
	k := Attempt{Job: id, Attempt: n}
	var owner string
	ok := false
	view(func(st *raftfsm.State) {
		j := st.Jobs[id]
		if j == nil || n < 1 || n > len(j.Attempts) || j.Attempts[n-1].N != n {
			return
		}
		ok, owner = hmac.Equal(capabilityMAC(key, j, &j.Attempts[n-1]), sig), j.Owner
	})
	if !ok {
		return Attempt{}, "", errCapability
	}
	return k, owner, nil
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
// cluster's CA, the cluster token or a job capability presented by a
// process of the job's owner on this node. It returns the attempt a
// capability grants (nil for the token) and false after answering 401 or
// 403 itself.
func (s *Server) authTokenOrJob(w http.ResponseWriter, r *http.Request) (*Attempt, bool) {
	if certAuthed(r) {
		return nil, true
	}
	auth := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(auth, "Bearer "); ok && tokenOK(tok, s.cfg.Token) {
		return nil, true
	}
	if c, ok := strings.CutPrefix(auth, "Job "); ok {
		k, owner, err := checkCapability(s.cfg.CapabilityKey, c, s.be.View)
		if err != nil {
			writeErr(w, http.StatusUnauthorized, err.Error())
			return nil, false
		}
		if err := callerIsOwner(r, owner); err != nil {
			writeErr(w, http.StatusForbidden, fmt.Sprintf("job %d attempt %d: %v", k.Job, k.Attempt, err))
			return nil, false
		}
		return &k, true
	}
	writeErr(w, http.StatusUnauthorized, "missing or wrong cluster token or job capability")
	return nil, false
}
