package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// stateOf is a replicated state holding jobs, as Backend.View reads it.
func stateOf(jobs ...*raftfsm.Job) func(func(*raftfsm.State)) {
	st := raftfsm.NewState()
	for _, j := range jobs {
		st.Jobs[j.ID] = j
	}
	return func(fn func(*raftfsm.State)) { fn(st) }
}

// placedJob is job id of owner with attempts placed at raft indexes.
func placedJob(id uint64, owner string, submitted time.Time, indexes ...uint64) *raftfsm.Job {
	j := &raftfsm.Job{ID: id, Owner: owner, SubmittedAt: submitted, State: raftfsm.StateRunning}
	for i, idx := range indexes {
		j.Attempts = append(j.Attempts, raftfsm.Attempt{N: i + 1, PlacedIndex: idx, PlacedAt: submitted.Add(time.Duration(i+1) * time.Second)})
	}
	j.Attempt = len(indexes)
	return j
}

// TestJobCapabilityGrantsOneAttempt: a capability verifies under its own
// key only, for the attempt it names only, as the state holds it; anything
// edited or malformed is refused.
func TestJobCapabilityGrantsOneAttempt(t *testing.T) {
	t.Parallel()
	key, other := []byte("key-one"), []byte("key-two")
	j := placedJob(7, "alice", time.Unix(1_800_000_000, 0), 40, 52)
	view := stateOf(j)
	c := JobCapability(key, j, &j.Attempts[1])
	if k, owner, err := checkCapability(key, c, view); err != nil || k != (Attempt{Job: 7, Attempt: 2}) || owner != "alice" {
		t.Fatalf("own capability: %v %q %v, want job 7 attempt 2 of alice", k, owner, err)
	}
	sig := c[strings.LastIndex(c, ".")+1:]
	for name, bad := range map[string]string{
		"another cluster's key": JobCapability(other, j, &j.Attempts[1]),
		"another attempt":       "7.1." + sig,
		"no such attempt":       "7.3." + sig,
		"another job":           "8.2." + sig,
		"no signature":          "7.2",
		"not numbers":           "x.y." + sig,
		"not hex":               "7.2.zz",
		"empty":                 "",
	} {
		if k, _, err := checkCapability(key, bad, view); err == nil {
			t.Errorf("%s: %q verified as %v", name, bad, k)
		}
	}
}

// TestCapabilityOfAReusedJobID is the replay of a capability after a
// snapshot restore set the next job ID back: alice's capability of her job
// 118 used to verify for the new job 118, whoever owned it, because it
// signed only "118/1". It names what cannot come back (the owner, the raft
// index of the attempt's placement, the placement and submission times),
// so it verifies for no later job of that ID, not even alice's own. An
// attempt restored from a snapshot older than the raft index (index 0)
// still gets a capability of its own, bound to the rest.
func TestCapabilityOfAReusedJobID(t *testing.T) {
	t.Parallel()
	key := []byte("capability-key")
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	old := placedJob(118, "alice", t0, 200)
	c := JobCapability(key, old, &old.Attempts[0])
	for name, now := range map[string]*raftfsm.Job{
		"bob's job 118 after the restore":    placedJob(118, "bob", t0.Add(time.Hour), 260),
		"alice's own new job 118":            placedJob(118, "alice", t0.Add(time.Hour), 260),
		"a rebuilt cluster's index and time": placedJob(118, "alice", t0.Add(time.Hour), 200),
		"the same times at another index":    placedJob(118, "alice", t0, 260),
	} {
		if k, owner, err := checkCapability(key, c, stateOf(now)); err == nil {
			t.Errorf("%s: alice's old capability verified as %v of %s", name, k, owner)
		}
	}
	restored := placedJob(5, "carol", t0, 0)
	rc := JobCapability(key, restored, &restored.Attempts[0])
	if _, owner, err := checkCapability(key, rc, stateOf(restored)); err != nil || owner != "carol" {
		t.Errorf("an attempt without a raft index: %q %v, want carol's capability to verify", owner, err)
	}
}

// TestSingleUserRefusal: an agent that is not root takes changes over the
// socket only from its own user; reads stay open; root's agent refuses nobody.
func TestSingleUserRefusal(t *testing.T) {
	t.Parallel()
	alice := Identity{UID: 1000, Name: "alice"}
	for _, c := range []struct {
		self   Identity
		uid    uint32
		method string
		refuse bool
	}{
		{alice, 1001, http.MethodPost, true},
		{alice, 0, http.MethodPost, true}, // root too: the agent could only run it as alice
		{alice, 1000, http.MethodPost, false},
		{alice, 1001, http.MethodGet, false},
		{alice, 1001, http.MethodHead, false},
		{Identity{UID: 0, Name: "root"}, 1001, http.MethodPost, false},
	} {
		why := singleUserRefusal(c.self, c.uid, c.method)
		if (why != "") != c.refuse {
			t.Errorf("agent %v, uid %d, %s: refusal %q, want refused=%v", c.self, c.uid, c.method, why, c.refuse)
		}
	}
}

// TestHiddenEnvKeepsNamesOnly: another user's job shows its variables'
// names, never their values.
func TestHiddenEnvKeepsNamesOnly(t *testing.T) {
	t.Parallel()
	got := hiddenEnv([]string{"API_KEY=s3cret", "EMPTY=", "ODD"})
	want := []string{"API_KEY=(hidden)", "EMPTY=(hidden)", "ODD=(hidden)"}
	if !slices.Equal(got, want) {
		t.Errorf("hiddenEnv = %q, want %q", got, want)
	}
	if hiddenEnv(nil) != nil {
		t.Error("hiddenEnv(nil) is not nil: a job without env would print []")
	}
}
