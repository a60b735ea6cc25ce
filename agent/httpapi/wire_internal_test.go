package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/api/apitest"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestWireConversionsKeepEveryField: the API's types are converted to and
// from raftfsm's and placement's at the HTTP boundary; a field the
// conversion forgets would be dropped silently. The job spec also keeps
// the JSON it had when the API sent raftfsm's type itself.
func TestWireConversionsKeepEveryField(t *testing.T) {
	t.Parallel()
	var sp raftfsm.JobSpec
	apitest.Fill(&sp)
	wire := toAPISpec(sp)
	if z := apitest.Zero(&wire); len(z) > 0 {
		t.Errorf("toAPISpec forgets %v", z)
	}
	if back := toRaftSpec(wire); !reflect.DeepEqual(back, sp) {
		t.Errorf("raftfsm -> api -> raftfsm changed the spec:\n got %+v\nwant %+v", back, sp)
	}
	a, _ := json.Marshal(sp)
	b, _ := json.Marshal(wire)
	if string(a) != string(b) {
		t.Errorf("the API's job spec JSON differs from what the API sent before:\n api %s\n raft %s", b, a)
	}

	var ar api.AllocRequest
	apitest.Fill(&ar)
	pr := toPlacementRequest(ar)
	if z := apitest.Zero(&pr); len(z) > 0 {
		t.Errorf("toPlacementRequest forgets %v", z)
	}

	var d placement.Decision
	apitest.Fill(&d)
	ad := toAPIDecision(d)
	// The network model's wait and coverage are the handler's, not placement's.
	ad.ModelWait, ad.ModelCoverage = true, "x"
	if z := apitest.Zero(&ad); len(z) > 0 {
		t.Errorf("toAPIDecision forgets %v", z)
	}
}

func TestWithInferredSwitch(t *testing.T) {
	t.Parallel()
	st := raftfsm.NewState()
	st.Switches = map[string]string{"b1": "~b1", "a1": "~a9"}
	for _, c := range []struct {
		in   api.Node
		want api.Node
	}{
		{api.Node{Name: "b1"}, api.Node{Name: "b1", Switch: "~b1", SwitchInferred: true}},
		{api.Node{Name: "a1", Switch: "rackA"}, api.Node{Name: "a1", Switch: "rackA"}}, // declared wins
		{api.Node{Name: "u"}, api.Node{Name: "u"}},
	} {
		n := c.in
		withInferredSwitch(&n, st)
		if n.Switch != c.want.Switch || n.SwitchInferred != c.want.SwitchInferred {
			t.Errorf("%s: %q inferred %v, want %q %v", c.in.Name, n.Switch, n.SwitchInferred, c.want.Switch, c.want.SwitchInferred)
		}
	}
}
