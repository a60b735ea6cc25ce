package tlsca

import (
	"crypto/tls"
	"sync"
	"time"
)

// Leaf holds a process's own certificate. An issued leaf is renewed on
// the first use after half its life, so no goroutine or timer is needed:
// every new TLS handshake asks Get. A loaded one (from files) is fixed.
type Leaf struct {
	mu  sync.Mutex
	ca  *CA // nil for a fixed leaf
	req LeafRequest
	now func() time.Time

	cur     *tls.Certificate
	renewAt time.Time
}

// IssuedLeaf issues a first leaf from ca at once (so an error shows at
// start) and renews it as it ages. now is the clock (time.Now in
// production).
func IssuedLeaf(ca *CA, req LeafRequest, now func() time.Time) (*Leaf, error) {
	if req.TTL <= 0 {
		req.TTL = DefaultLeafTTL
	}
	l := &Leaf{ca: ca, req: req, now: now}
	if err := l.renew(now()); err != nil {
		return nil, err
	}
	return l, nil
}

// FixedLeaf serves the same certificate until the process ends.
func FixedLeaf(c tls.Certificate) *Leaf {
	return &Leaf{cur: &c}
}

func (l *Leaf) renew(now time.Time) error {
	c, err := l.ca.Issue(l.req, now)
	if err != nil {
		return err
	}
	l.cur, l.renewAt = &c, now.Add(l.req.TTL/2)
	return nil
}

// Get returns the current certificate, renewing an issued one that passed
// half its life. A failed renewal keeps serving the old one while it lasts.
func (l *Leaf) Get() (*tls.Certificate, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ca != nil {
		if now := l.now(); !now.Before(l.renewAt) {
			if err := l.renew(now); err != nil && now.After(l.cur.Leaf.NotAfter) {
				return nil, err
			}
		}
	}
	return l.cur, nil
}

// Reissue issues a new leaf for req now (an issued leaf; a fixed one is
// left alone): the agent learns its advertise address from gossip only
// after its first leaf exists.
func (l *Leaf) Reissue(req LeafRequest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ca == nil {
		return nil
	}
	if req.TTL <= 0 {
		req.TTL = DefaultLeafTTL
	}
	old := l.req
	l.req = req
	if err := l.renew(l.now()); err != nil {
		l.req = old
		return err
	}
	return nil
}
