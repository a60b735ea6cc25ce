package agentconfig

import (
	"reflect"
	"slices"
)

// Changed lists, by file key and sorted, the keys whose setting differs
// between a and b: a key set to its default in one and left out of the
// other has not changed. A SIGHUP reload uses it to say what it changed
// and what needs a restart.
func (a *Agent) Changed(b *Agent) []string {
	av, bv := a.values(), b.values()
	var out []string
	for _, k := range keys {
		if !reflect.DeepEqual(effect(k, av), effect(k, bv)) {
			out = append(out, k.Name())
		}
	}
	slices.Sort(out)
	return out
}

// values is the last value of every key set, by flag.
func (a *Agent) values() map[string]Value {
	out := map[string]Value{}
	for _, ap := range a.applied {
		out[ap.key.Flag] = ap.val
	}
	return out
}

// effect is what key k alone makes of the defaults, with its value in vals.
func effect(k Key, vals map[string]Value) Agent {
	x := Default()
	if v, ok := vals[k.Flag]; ok {
		_ = k.set(&x, v) // vals passed the same setter once
	}
	return x
}
