package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/nodestate"
)

// putBackend keeps the rows POST /v1/netrow hands it, as a server's table
// would; other methods panic (the nil Backend).
type putBackend struct {
	Backend
	kept []nodestate.NetRow
}

func (b *putBackend) PutNetRow(r nodestate.NetRow) error {
	b.kept = append(b.kept, r)
	return nil
}

// TestNetRow_OwnRowOnly: a node's certificate may send only that node's
// row; a refusal is a 403 of one line and reaches no table. The token and
// root over the local socket stay administrators and may send any row.
// (TestNetRows_ReachServers checks the same over a live cluster's TLS.)
func TestNetRow_OwnRowOnly(t *testing.T) {
	t.Parallel()
	be := &putBackend{}
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey = "n1", "tok", []byte("k")
	s, err := New(cfg, be)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	row := func(owner string) []byte {
		b, err := nodestate.EncodeNetRow(&nodestate.NetRow{Node: owner, Boot: 1, V: 1, Cells: []nodestate.NetEntry{{Peer: "n1", AvailMbps: 5, BWAt: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		cert  string // common name of the client certificate; "" none
		auth  string
		local *localPeer
		owner string
		code  int
		want  string
	}{
		{name: "another node's row", cert: "n2", owner: "n3", code: http.StatusForbidden, want: `the certificate of node "n2" may send only that node's network row, not "n3"'s`},
		{name: "its own row", cert: "n2", owner: "n2", code: http.StatusNoContent},
		{name: "a name that differs in case", cert: "N2", owner: "n2", code: http.StatusForbidden, want: `not "n2"'s`},
		{name: "a certificate and the token", cert: "n2", auth: "Bearer tok", owner: "n3", code: http.StatusForbidden, want: "may send only"},
		{name: "the token alone", auth: "Bearer tok", owner: "n3", code: http.StatusNoContent},
		{name: "root over the socket", local: &localPeer{uid: 0}, owner: "n3", code: http.StatusNoContent},
	} {
		be.kept = nil
		r := httptest.NewRequest(http.MethodPost, "/v1/netrow", bytes.NewReader(row(tc.owner)))
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
		h.ServeHTTP(w, r)
		var e api.Error
		_ = json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != tc.code || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, w.Code, e.Error, tc.code, tc.want)
		}
		switch kept := len(be.kept); {
		case tc.code == http.StatusNoContent && (kept != 1 || be.kept[0].Node != tc.owner):
			t.Errorf("%s: the table got %+v, want %s's row", tc.name, be.kept, tc.owner)
		case tc.code != http.StatusNoContent && kept != 0:
			t.Errorf("%s: refused, yet the table got %+v", tc.name, be.kept)
		}
		if strings.Contains(e.Error, "\n") {
			t.Errorf("%s: the error is not one line: %q", tc.name, e.Error)
		}
	}
}
