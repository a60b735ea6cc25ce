package agent

import (
	"math"
	"slices"

	"github.com/shoal-hpc/shoal/nodestate"
)

// inventory is the node's static state as it gossips it: what probe
// scanned, with the operator's switch and features (sorted, each once).
func inventory(s nodestate.Static, sw string, features []string) nodestate.Static {
	out := s
	out.PEs = slices.Clone(s.PEs)
	out.Switch, out.Features = sw, nil
	if len(features) > 0 {
		out.Features = slices.Compact(slices.Sorted(slices.Values(features)))
	}
	return out
}

// gossiped is a sample's dynamic state as the node gossips it: its
// traffic rounded to the byte, which a broadcast carries in fewer digits
// and placement cannot tell apart.
func gossiped(d nodestate.Dynamic) nodestate.Dynamic {
	d.NetRxBytesPerSec, d.NetTxBytesPerSec = math.Round(d.NetRxBytesPerSec), math.Round(d.NetTxBytesPerSec)
	return d
}
