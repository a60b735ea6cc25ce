package probes

import (
	"testing"

	"github.com/shoal-hpc/shoal/agent/probes/child"
)

func TestChooseCheckPeer(t *testing.T) {
	t.Parallel()
	cand := func(name string, figure, traffic float64) checkCandidate {
		return checkCandidate{Peer: child.Peer{Name: name, Addr: name + ":7949"}, Figure: figure, Traffic: traffic}
	}
	cands := []checkCandidate{cand("n04", 100, 0), cand("n02", 100, 1), cand("n03", 100, 0), cand("n05", 0, 0), cand("n06", 100, 60)}
	tests := []struct {
		name string
		last string
		busy map[string]bool
		want string
	}{
		{name: "first check: the first peer by name", want: "n02"},
		{name: "the rotation goes on after the last peer", last: "n02", want: "n03"},
		{name: "a peer never tested has no figure to judge by; a busy one shares its link", last: "n04", want: "n02"},
		{name: "a peer in a bandwidth test now is passed over", last: "n02", busy: map[string]bool{"n03": true}, want: "n04"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := chooseCheckPeer(append([]checkCandidate(nil), cands...), tt.last, tt.busy)
			if !ok || got.Name != tt.want {
				t.Fatalf("chooseCheckPeer = %v %v, want %s", got, ok, tt.want)
			}
		})
	}
	if p, ok := chooseCheckPeer([]checkCandidate{cand("n05", 0, 0), cand("n06", 100, 60)}, "", nil); ok {
		t.Fatalf("no quiet peer with a figure: chose %v", p)
	}
	if _, ok := chooseCheckPeer(nil, "", nil); ok {
		t.Fatal("no peers: chose one")
	}
}

// A check's half that shared this node's link with a job reads what the
// link carried: the job took its share of a link that is not slower.
func TestCarriedRate(t *testing.T) {
	t.Parallel()
	const b, ns = 256 << 10, 200_000_000 // 256 KiB in 0.2 s: 10.5 Mbit/s
	if got := carriedRate(b, ns, 0); got < 10.4 || got > 10.6 {
		t.Fatalf("no count: %v, want the rate", got)
	}
	if got := carriedRate(b, ns, 97); got != 97 {
		t.Fatalf("beside a job: %v, want the link's 97", got)
	}
	if got := carriedRate(b, ns, 5); got < 10.4 {
		t.Fatalf("a count under the rate: %v, want the rate", got)
	}
	if got := carriedRate(0, ns, 97); got != 0 {
		t.Fatalf("nothing moved: %v, want 0", got)
	}
}
