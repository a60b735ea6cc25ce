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

// Drains, snapshots and raft repair are an administrator's: over the local
// socket anyone but root is refused before the agent is asked anything
// (the backend here is nil: touching it would panic).
func TestAdminOnlyOverTheSocket(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.DiscardHandler), now: time.Now}
	for _, tc := range []struct {
		method, path string
		h            http.HandlerFunc
	}{
		{"POST", "/v1/nodes/n1/drain", s.handleDrain},
		{"POST", "/v1/nodes/n1/undrain", s.handleUndrain},
		{"GET", "/v1/operator/snapshot", s.handleSnapshotSave},
		{"POST", "/v1/operator/snapshot", s.handleSnapshotRestore},
		{"GET", "/v1/operator/raft/peers", s.handleRaftPeers},
		{"POST", "/v1/operator/raft/remove-peer", s.handleRemovePeer},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(`{}`))
		r.SetPathValue("name", "n1")
		r = r.WithContext(context.WithValue(r.Context(), localPeerKey{}, localPeer{uid: 1000}))
		w := httptest.NewRecorder()
		tc.h(w, r)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "needs root or the cluster token") {
			t.Errorf("%s %s from uid 1000: %d %s, want 403", tc.method, tc.path, w.Code, w.Body)
		}
	}
}
