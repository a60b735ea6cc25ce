package httpapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// leaseBackend records the renewals POST /v1/lease hands it, as the
// leader would; notLeader makes it refuse as an agent that does not lead.
type leaseBackend struct {
	Backend
	notLeader bool
	renewed   []api.LeaseRenewal
}

// leaseIndex is the applied index leaseBackend answers a renewal with.
const leaseIndex = 42

func (b *leaseBackend) RenewLease(_ context.Context, node string, applied uint64, lease time.Duration) (uint64, error) {
	if b.notLeader {
		return 0, WithStatus(http.StatusConflict, errors.New("not the leader"))
	}
	b.renewed = append(b.renewed, api.LeaseRenewal{Node: node, Applied: applied, LeaseMS: lease.Milliseconds()})
	return leaseIndex, nil
}

// TestLease_OwnNodeOnly: a node's certificate renews only that node's
// lease, so no node can keep another's attempts from being fenced; a job
// capability and a user over the socket renew none; a malformed body is a
// 400 and an agent that does not lead answers 409. Every refusal is one
// line and records nothing; a renewal is answered with the leader's
// applied index.
func TestLease_OwnNodeOnly(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey = "n1", "tok", []byte("k")
	for _, tc := range []struct {
		name      string
		cert      string
		auth      string
		local     *localPeer
		body      string
		notLeader bool
		code      int
		want      string
	}{
		{name: "its own lease", cert: "n2", body: `{"node":"n2","applied":7,"lease_ms":4000}`, code: http.StatusOK},
		{name: "a negative lease", cert: "n2", body: `{"node":"n2","lease_ms":-1}`, code: http.StatusBadRequest, want: "want a JSON body"},
		{name: "another node's lease", cert: "n2", body: `{"node":"n3"}`, code: http.StatusForbidden, want: `the certificate of node "n2" may renew only that node's lease, not "n3"'s`},
		{name: "a job capability", auth: "Job abc", body: `{"node":"n2"}`, code: http.StatusForbidden, want: "lease renewals come from agents"},
		{name: "a user over the socket", local: &localPeer{uid: 1000}, body: `{"node":"n2"}`, code: http.StatusForbidden, want: "you are uid 1000"},
		{name: "root over the socket", local: &localPeer{uid: 0}, body: `{"node":"n3"}`, code: http.StatusOK},
		{name: "no node", cert: "n2", body: `{}`, code: http.StatusBadRequest, want: `want a JSON body {"node": NAME`},
		{name: "not the leader", cert: "n2", body: `{"node":"n2"}`, notLeader: true, code: http.StatusConflict, want: "not the leader"},
	} {
		be := &leaseBackend{notLeader: tc.notLeader}
		s, err := New(cfg, be)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "/v1/lease", strings.NewReader(tc.body))
		if tc.cert != "" {
			c := &x509.Certificate{Subject: pkix.Name{CommonName: tc.cert}}
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}, VerifiedChains: [][]*x509.Certificate{{c}}}
		}
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		if tc.local != nil {
			r = r.WithContext(context.WithValue(r.Context(), localPeerKey{}, *tc.local))
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		var e api.Error
		_ = json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != tc.code || !strings.Contains(e.Error, tc.want) || strings.Contains(e.Error, "\n") {
			t.Errorf("%s: %d %q, want %d %q (one line)", tc.name, w.Code, e.Error, tc.code, tc.want)
		}
		if ok := tc.code == http.StatusOK; ok != (len(be.renewed) == 1) {
			t.Errorf("%s: renewals recorded %+v", tc.name, be.renewed)
		} else if ok {
			var g api.LeaseGrant
			if err := json.Unmarshal(w.Body.Bytes(), &g); err != nil || g.Index != leaseIndex {
				t.Errorf("%s: answered %q (%v), want the grant of index %d", tc.name, w.Body.String(), err, leaseIndex)
			}
		}
	}
}
