package probe

import (
	"context"
	"testing"
)

// BenchmarkHostSampler_Traffic is what one read of the traffic watch
// costs on this host: the interface counters and the list of interfaces
// a sample leaves out. The watch reads them a few times per sample
// interval; its period follows from this cost.
//
//	go test -run '^$' -bench HostSampler_Traffic -benchtime 2000x ./probe/
func BenchmarkHostSampler_Traffic(b *testing.B) {
	h := NewHostSampler()
	ctx := context.Background()
	if _, _, err := h.Traffic(ctx); err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := h.Traffic(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
