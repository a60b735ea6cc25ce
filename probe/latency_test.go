package probe

import (
	"testing"
	"time"
)

func TestRTTWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var w RTTWindow
	if _, _, _, ok := w.Means(t0); ok {
		t.Fatal("empty window has means")
	}
	w.Add(t0, 400*time.Microsecond)
	w.Add(t0.Add(3*time.Minute), 200*time.Microsecond)
	w.Add(t0.Add(4*time.Minute+30*time.Second), 100*time.Microsecond)
	m1, m5, latest, ok := w.Means(t0.Add(5 * time.Minute))
	if !ok || m1 != 100*time.Microsecond || m5 != 700*time.Microsecond/3 || !latest.Equal(t0.Add(4*time.Minute+30*time.Second)) {
		t.Fatalf("means %v %v %v %v", m1, m5, latest, ok)
	}
	// With no sample in the last minute, m1 is the latest sample.
	if m1, _, _, _ := w.Means(t0.Add(5*time.Minute + 59*time.Second)); m1 != 100*time.Microsecond {
		t.Fatalf("m1 without a recent sample = %v", m1)
	}
	if got := MedianRTT([]time.Duration{5, 1, 3}); got != 3 {
		t.Fatalf("median = %v", got)
	}
}
