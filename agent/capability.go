package agent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// A job capability lets the processes of one job attempt launch that
// attempt's commands on its own nodes (what `shoal rsh` does for MPI), and
// nothing else. It is derived from the cluster token, so any agent can
// check it, and the job's processes never see the token itself.

func (a *Agent) jobCapability(k jobKey) string {
	m := hmac.New(sha256.New, derive(a.cfg.Token, "job-capability"))
	fmt.Fprintf(m, "%d/%d", k.Job, k.Attempt)
	return fmt.Sprintf("%d.%d.%s", k.Job, k.Attempt, hex.EncodeToString(m.Sum(nil)))
}

// checkCapability returns the attempt a capability grants, or an error.
func (a *Agent) checkCapability(c string) (jobKey, error) {
	parts := strings.Split(c, ".")
	if len(parts) != 3 {
		return jobKey{}, fmt.Errorf("malformed job capability")
	}
	id, err1 := strconv.ParseUint(parts[0], 10, 64)
	att, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return jobKey{}, fmt.Errorf("malformed job capability")
	}
	k := jobKey{Job: id, Attempt: att}
	if !hmac.Equal([]byte(a.jobCapability(k)), []byte(c)) {
		return jobKey{}, fmt.Errorf("job capability does not verify")
	}
	return k, nil
}

// authTokenOrJob admits a request with a client certificate of the
// cluster's CA, the cluster token or a job capability. It returns the attempt a capability grants (nil for the
// token) and false after answering 401 itself.
func (a *Agent) authTokenOrJob(w http.ResponseWriter, r *http.Request) (*jobKey, bool) {
	if certAuthed(r) {
		return nil, true
	}
	auth := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(auth, "Bearer "); ok && tokenOK(tok, a.cfg.Token) {
		return nil, true
	}
	if c, ok := strings.CutPrefix(auth, "Job "); ok {
		k, err := a.checkCapability(c)
		if err != nil {
			writeErr(w, http.StatusUnauthorized, err.Error())
			return nil, false
		}
		return &k, true
	}
	writeErr(w, http.StatusUnauthorized, "missing or wrong cluster token or job capability")
	return nil, false
}
