package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The replication stream carries every raw command and every job's
// environment: agents and administrators only. Each refusal comes before
// the backend is asked anything (it is nil here: touching it would panic).
func TestReplicateIsForAgents(t *testing.T) {
	t.Parallel()
	key := []byte("capability-key")
	s := &Server{cfg: Config{Token: "tok", CapabilityKey: key}, log: slog.New(slog.DiscardHandler), now: time.Now}
	capability := "3.1.00" // refused for what it claims, before it is checked
	for _, tc := range []struct {
		name  string
		local *localPeer
		auth  string
		query string
		code  int
		want  string
	}{
		{name: "local user", local: &localPeer{uid: 1000}, code: http.StatusForbidden, want: "you are uid 1000"},
		{name: "job capability", auth: "Job " + capability, code: http.StatusForbidden, want: "a job capability does not grant it"},
		{name: "nothing", code: http.StatusUnauthorized, want: "missing or wrong cluster token"},
		{name: "wrong token", auth: "Bearer nope", code: http.StatusUnauthorized, want: "missing or wrong cluster token"},
		{name: "token, bad index", auth: "Bearer tok", query: "?after=-1", code: http.StatusBadRequest, want: `after must be a raft index, not \"-1\"`},
		{name: "root, bad index", local: &localPeer{uid: 0}, query: "?after=x", code: http.StatusBadRequest, want: "after must be a raft index"},
	} {
		r := httptest.NewRequest("GET", "/v1/replicate"+tc.query, nil)
		if tc.local != nil {
			r = r.WithContext(context.WithValue(r.Context(), localPeerKey{}, *tc.local))
		}
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		s.handleReplicate(w, r)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, w.Code, strings.TrimSpace(w.Body.String()), tc.code, tc.want)
		}
	}
}
