package placement

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// AttrNames are the names SetWeight accepts, in Table 1's order.
var AttrNames = []string{"load", "util", "flow", "mem", "cores", "mhz", "memtotal", "users"}

// SetWeight sets one compute-load attribute weight from a user's
// NAME=WEIGHT (`shoal alloc --weight flow=0`), leaving the others as
// they are. The error says which names and values are accepted.
func (w *AttrWeights) SetWeight(spec string) error {
	name, val, ok := strings.Cut(spec, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	if !ok {
		return fmt.Errorf("weight %q: want NAME=WEIGHT, e.g. flow=0 (names: %s)", spec, strings.Join(AttrNames, ", "))
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("weight %q: %q is not a finite number >= 0", spec, val)
	}
	field := map[string]*float64{
		"load": &w.Load, "util": &w.CPUUtil, "flow": &w.NetFlow, "mem": &w.MemAvail,
		"cores": &w.Cores, "mhz": &w.MHz, "memtotal": &w.MemTotal, "users": &w.Users,
	}[name]
	if field == nil {
		return fmt.Errorf("weight %q: unknown attribute %q (names: %s)", spec, name, strings.Join(AttrNames, ", "))
	}
	*field = v
	return nil
}
