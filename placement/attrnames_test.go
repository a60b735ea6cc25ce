package placement

import (
	"strings"
	"testing"
)

func TestSetWeight(t *testing.T) {
	t.Parallel()
	w := DefaultAttrWeights()
	for _, spec := range []string{"flow=0", " Load = 0.5", "users=1e-1"} {
		if err := w.SetWeight(spec); err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
	}
	want := DefaultAttrWeights()
	want.NetFlow, want.Load, want.Users = 0, 0.5, 0.1
	if w != want {
		t.Fatalf("got %+v, want %+v", w, want)
	}
	for _, name := range AttrNames {
		if err := w.SetWeight(name + "=0.25"); err != nil {
			t.Errorf("documented name %q refused: %v", name, err)
		}
	}
	bad := map[string]string{
		"flow":      "want NAME=WEIGHT",
		"net=0.2":   `unknown attribute "net"`,
		"load=-1":   "finite number >= 0",
		"load=NaN":  "finite number >= 0",
		"load=+Inf": "finite number >= 0",
		"load=x":    "finite number >= 0",
	}
	for spec, msg := range bad {
		before := w
		err := w.SetWeight(spec)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want one containing %q", spec, err, msg)
		}
		if w != before {
			t.Errorf("%q changed the weights", spec)
		}
	}
}
