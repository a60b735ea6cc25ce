package gossip

import (
	"testing"
	"time"
)

func TestRTTFilterMinOfWindow(t *testing.T) {
	t.Parallel()
	f := newRTTFilter(3)
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	steps := []struct {
		peer     string
		rtt, min time.Duration
	}{
		{"a", ms(5), ms(5)},
		{"a", ms(0.1), ms(0.1)},
		{"b", ms(2), ms(2)}, // peers are independent
		{"a", ms(4), ms(0.1)},
		{"a", ms(3), ms(0.1)},
		{"a", ms(6), ms(3)}, // 0.1 has left the window of 3: the link got slower
	}
	for i, s := range steps {
		if got := f.add(s.peer, s.rtt); got != s.min {
			t.Fatalf("step %d: add(%s, %v) = %v, want %v", i, s.peer, s.rtt, got, s.min)
		}
	}
	f.forget("a")
	if got := f.add("a", ms(9)); got != ms(9) {
		t.Fatalf("after forget: %v, want 9ms", got)
	}
}
