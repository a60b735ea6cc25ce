package jobrun

import (
	"fmt"
	"os"
	"testing"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestCapabilityFileOfAReplacedAttempt: after a snapshot restore sets the
// next job ID back, an attempt placed again under the same job and attempt
// numbers has another capability (it covers the placing entry's raft
// index). This node must write it a file of its own, not hand its
// processes the old attempt's file, and the old file goes.
func TestCapabilityFileOfAReplacedAttempt(t *testing.T) {
	st := fixedState{raftfsm.NewState()}
	n := testNode(t, st, func() {})
	n.d.JobCapability = func(j *raftfsm.Job, att *raftfsm.Attempt) string {
		return fmt.Sprintf("%d.%d.placed-at-%d", j.ID, att.N, att.PlacedIndex)
	}
	t.Cleanup(func() { n.removeCapabilityFiles(true) })
	j := &raftfsm.Job{ID: 7, Owner: "root", State: raftfsm.StateRunning, Attempt: 1,
		Attempts: []raftfsm.Attempt{{N: 1, PlacedIndex: 40}}}
	old, err := n.capabilityFile(j, &j.Attempts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	j.Attempts[0].PlacedIndex = 90 // the job of the same ID after a restore
	st.s.Jobs[j.ID] = j
	again, err := n.capabilityFile(j, &j.Attempts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(again); err != nil || string(b) != "7.1.placed-at-90\n" {
		t.Errorf("the new attempt's file %s holds %q, %v; want its own capability", again, b, err)
	}
	if again == old {
		t.Errorf("the new attempt got the old attempt's file %s", old)
	}
	n.removeCapabilityFiles(false)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the replaced attempt's file %s is still there: %v", old, err)
	}
	if _, err := os.Stat(again); err != nil {
		t.Errorf("the live attempt's file went: %v", err)
	}
}

// fixedState is a StateReader of one state the test changes in place.
type fixedState struct{ s *raftfsm.State }

func (f fixedState) View(fn func(*raftfsm.State)) { fn(f.s) }
func (f fixedState) State() *raftfsm.State        { return f.s }
func (f fixedState) Index() uint64                { return 1 }
func (f fixedState) Changed() <-chan struct{}     { return nil }
