package probe

import "time"

// nonceCache remembers the nonces of bandwidth requests the server has
// accepted, for as long as their timestamps keep them inside the clock-skew
// window, so that a captured request cannot be replayed to record a bogus
// rate in the claimed sender's name. Only authenticated requests reach it,
// so only members can fill it; a full cache refuses rather than forgets.
// Time is passed in; not safe for concurrent use (the server locks).
type nonceCache struct {
	window time.Duration
	max    int
	until  map[[16]byte]time.Time
}

// maxNonces is far more than the requests one server can receive within a
// window: tests run one at a time and each takes at least a round trip.
const maxNonces = 1 << 16

func newNonceCache(window time.Duration, max int) *nonceCache {
	return &nonceCache{window: window, max: max, until: make(map[[16]byte]time.Time)}
}

// fresh records nonce, sent at at, and reports whether it is new. A request
// stops being replayable once now is past at+window (the server refuses
// its timestamp then), so the nonce is kept until that moment.
func (c *nonceCache) fresh(nonce [16]byte, at, now time.Time) bool {
	if _, seen := c.until[nonce]; seen {
		return false
	}
	if len(c.until) >= c.max {
		c.prune(now)
		if len(c.until) >= c.max {
			return false
		}
	}
	c.until[nonce] = at.Add(c.window)
	return true
}

// prune forgets the nonces whose requests can no longer be replayed.
func (c *nonceCache) prune(now time.Time) {
	for n, until := range c.until {
		if now.After(until) {
			delete(c.until, n)
		}
	}
}
