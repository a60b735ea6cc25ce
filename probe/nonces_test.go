package probe

import (
	"testing"
	"time"
)

func TestNonceCache(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	c := newNonceCache(2*time.Minute, 3)
	n := func(b byte) [16]byte { return [16]byte{b} }
	steps := []struct {
		nonce   byte
		at, now time.Duration // offsets from t0
		want    bool
	}{
		{1, 0, 0, true},
		{1, 0, time.Second, false},          // replayed at once
		{1, 0, 119 * time.Second, false},    // replayed within the window
		{2, time.Second, time.Second, true}, // another request
		{3, 2 * time.Second, 3 * time.Second, true},
		{4, 3 * time.Second, 4 * time.Second, false},  // full, nothing expired: refuse, do not forget
		{1, 0, 121 * time.Second, false},              // still remembered (the server's skew check refuses it anyway)
		{4, 3 * time.Second, 122 * time.Second, true}, // full, but nonce 1 and 2 have expired
		{2, time.Second, 122 * time.Second, true},     // forgotten after its window: the skew check guards it now
	}
	for i, st := range steps {
		if got := c.fresh(n(st.nonce), t0.Add(st.at), t0.Add(st.now)); got != st.want {
			t.Fatalf("step %d: fresh(nonce %d, at +%v, now +%v) = %v, want %v", i, st.nonce, st.at, st.now, got, st.want)
		}
	}
}
