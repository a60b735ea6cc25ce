package raftfsm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// State is the whole replicated desired state. Its JSON form is canonical: jobs sorted by ID,
// probes by node and kind, so equal states give equal bytes.
type State struct {
	Jobs map[uint64]*Job
	// NextJobID is the ID the next new job gets; IDs start at 1 and are never reused.
	NextJobID uint64
	Settings  Settings
	// Limits are the per-user limits submit_job enforces; zero = none (limits.go).
	Limits      Limits
	ProbeDuties ProbeDuties
	Probes      map[ProbeKey]*Probe
	// Drains holds the drained nodes by name (drain.go); nil when none is.
	Drains map[string]Drain
	// History holds the records of purged jobs, by job ID (history.go); nil when none.
	History []HistoryRecord
	// Switches holds the switch the leader inferred for each node that declares none
	// (switches.go); nil when none is.
	Switches map[string]string
	// Partitions holds the partitions by name (partition.go); nil when none is set.
	Partitions map[string]Partition

	// byRequest indexes Jobs by RequestID for submit dedup; rebuilt from Jobs, never serialised.
	byRequest map[string]uint64
	// jobs is derived from Jobs for keepFinished (jobindex.go); nil until needed.
	jobs *jobIndex
}

// NewState returns the state of a fresh cluster.
func NewState() *State {
	return &State{
		Jobs:      map[uint64]*Job{},
		NextJobID: 1,
		Settings:  DefaultSettings(),
		Probes:    map[ProbeKey]*Probe{},
		byRequest: map[string]uint64{},
	}
}

// JobByRequest returns the job submitted with request ID id, or nil.
func (s *State) JobByRequest(id string) *Job {
	if jid, ok := s.byRequest[id]; ok {
		return s.Jobs[jid]
	}
	return nil
}

// Clone returns a deep copy that shares nothing with s.
func (s *State) Clone() *State {
	c := &State{
		Jobs:        make(map[uint64]*Job, len(s.Jobs)),
		NextJobID:   s.NextJobID,
		Settings:    s.Settings,
		Limits:      s.Limits,
		ProbeDuties: s.ProbeDuties.clone(),
		Probes:      make(map[ProbeKey]*Probe, len(s.Probes)),
		byRequest:   maps.Clone(s.byRequest),
		Drains:      maps.Clone(s.Drains),
		History:     slices.Clone(s.History), // records are never changed in place
		Switches:    maps.Clone(s.Switches),
		Partitions:  maps.Clone(s.Partitions), // set_partition replaces whole partitions, never edits one
	}
	if c.byRequest == nil {
		c.byRequest = map[string]uint64{}
	}
	for id, j := range s.Jobs {
		c.Jobs[id] = j.clone()
	}
	for k, p := range s.Probes {
		q := *p
		c.Probes[k] = &q
	}
	return c
}

// Shared returns a copy of s to read outside the FSM's lock that costs a
// pointer per job rather than a deep copy of each (at 100,000 queued
// tasks a deep copy takes a second; the leader takes one every scheduling
// round). It shares the jobs, which the FSM never changes in place (every
// write of a job puts a new one in, setJob), and the history, to which
// it only appends past what the copy holds. The caller must modify
// nothing it reaches, and JobByRequest finds nothing in it (the request
// index is written in place).
func (s *State) Shared() *State {
	c := &State{
		Jobs:        maps.Clone(s.Jobs),
		NextJobID:   s.NextJobID,
		Settings:    s.Settings,
		Limits:      s.Limits,
		ProbeDuties: s.ProbeDuties.clone(),
		Probes:      make(map[ProbeKey]*Probe, len(s.Probes)),
		Drains:      maps.Clone(s.Drains),
		History:     s.History[:len(s.History):len(s.History)],
		Switches:    maps.Clone(s.Switches),
		Partitions:  maps.Clone(s.Partitions),
	}
	for k, p := range s.Probes {
		q := *p
		c.Probes[k] = &q
	}
	return c
}

// SortedJobIDs returns the IDs of all jobs in increasing order.
func (s *State) SortedJobIDs() []uint64 {
	return slices.Sorted(maps.Keys(s.Jobs))
}

// stateJSON is State's canonical wire form.
type stateJSON struct {
	NextJobID   uint64          `json:"next_job_id"`
	Settings    Settings        `json:"settings"`
	Limits      Limits          `json:"limits,omitzero"`
	ProbeDuties ProbeDuties     `json:"probe_duties"`
	Jobs        []jobJSON       `json:"jobs"`
	Probes      []*Probe        `json:"probes"`
	Drains      []Drain         `json:"drains,omitempty"`
	History     []HistoryRecord `json:"history,omitempty"`
	// Switches marshals with its keys sorted (encoding/json), so the form stays canonical.
	Switches map[string]string `json:"switches,omitempty"`
	// Partitions are sorted by name.
	Partitions []Partition `json:"partitions,omitempty"`
}

// MarshalJSON writes the canonical form.
func (s *State) MarshalJSON() ([]byte, error) {
	w := stateJSON{
		NextJobID:   s.NextJobID,
		Settings:    s.Settings,
		Limits:      s.Limits,
		ProbeDuties: s.ProbeDuties,
		Jobs:        make([]jobJSON, 0, len(s.Jobs)),
		Probes:      make([]*Probe, 0, len(s.Probes)),
	}
	if len(s.Drains) > 0 {
		w.Drains = sortedDrains(s.Drains)
	}
	w.History = s.History
	if len(s.Switches) > 0 {
		w.Switches = s.Switches
	}
	for _, name := range slices.Sorted(maps.Keys(s.Partitions)) {
		w.Partitions = append(w.Partitions, s.Partitions[name])
	}
	first := map[uint64]*Job{} // the first task of each array, which carries the spec
	for _, id := range s.SortedJobIDs() {
		j := s.Jobs[id]
		if f := first[j.ArrayJobID]; f != nil && sameSpec(&f.Spec, &j.Spec) {
			c := *j // shallow: only its spec is left out
			c.Spec = JobSpec{}
			w.Jobs = append(w.Jobs, jobJSON{Job: &c, SpecOf: f.ID})
			continue
		}
		if j.InArray() && first[j.ArrayJobID] == nil {
			first[j.ArrayJobID] = j
		}
		w.Jobs = append(w.Jobs, jobJSON{Job: j})
	}
	for _, p := range s.Probes {
		w.Probes = append(w.Probes, p)
	}
	slices.SortFunc(w.Probes, func(a, b *Probe) int { return a.ProbeKey.compare(b.ProbeKey) })
	return json.Marshal(w)
}

// UnmarshalJSON reads the canonical form and checks the invariants a snapshot must hold.
func (s *State) UnmarshalJSON(data []byte) error {
	var w stateJSON
	if err := strictUnmarshal(data, &w); err != nil {
		return err
	}
	if w.NextJobID < 1 {
		return fmt.Errorf("%w: next_job_id = %d, must be >= 1", ErrMalformed, w.NextJobID)
	}
	n := NewState()
	n.NextJobID = w.NextJobID
	if err := w.Settings.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	n.Settings = w.Settings
	if err := w.Limits.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	n.Limits = w.Limits
	n.ProbeDuties = w.ProbeDuties
	first := map[uint64]*Job{}
	for i, jw := range w.Jobs {
		j := jw.Job
		if j == nil {
			return fmt.Errorf("%w: job entry %d is null", ErrMalformed, i)
		}
		if err := jw.resolveSpec(first); err != nil {
			return err
		}
		if _, dup := n.Jobs[j.ID]; dup {
			return fmt.Errorf("%w: job %d twice", ErrMalformed, j.ID)
		}
		if j.ID == 0 || j.ID >= n.NextJobID {
			return fmt.Errorf("%w: job ID %d outside [1,%d)", ErrMalformed, j.ID, n.NextJobID)
		}
		if j.RequestID != "" {
			if _, dup := n.byRequest[j.RequestID]; dup {
				return fmt.Errorf("%w: request ID %q twice", ErrMalformed, j.RequestID)
			}
			n.byRequest[j.RequestID] = j.ID
		}
		if err := checkJobRecord(j); err != nil {
			return err
		}
		n.Jobs[j.ID] = j
	}
	for i, p := range w.Probes {
		if p == nil {
			return fmt.Errorf("%w: probe entry %d is null", ErrMalformed, i)
		}
		if _, dup := n.Probes[p.ProbeKey]; dup {
			return fmt.Errorf("%w: probe %s/%s twice", ErrMalformed, p.Node, p.Kind)
		}
		if err := checkProbeRecord(p); err != nil {
			return err
		}
		n.Probes[p.ProbeKey] = p
	}
	for _, d := range w.Drains {
		if d.Node == "" {
			return fmt.Errorf("%w: a drain names no node", ErrMalformed)
		}
		if _, dup := n.Drains[d.Node]; dup {
			return fmt.Errorf("%w: drain of %s twice", ErrMalformed, d.Node)
		}
		if n.Drains == nil {
			n.Drains = map[string]Drain{}
		}
		n.Drains[d.Node] = d
	}
	for i, r := range w.History {
		if r.ID == 0 || (i > 0 && r.ID <= w.History[i-1].ID) {
			return fmt.Errorf("%w: history record %d (job %d) out of order", ErrMalformed, i, r.ID)
		}
	}
	if len(w.History) > MaxHistoryRecords {
		return fmt.Errorf("%w: %d history records, at most %d", ErrMalformed, len(w.History), MaxHistoryRecords)
	}
	n.History = w.History
	for node, sw := range w.Switches {
		if node == "" || sw == "" {
			return fmt.Errorf("%w: an inferred switch names no node or no switch", ErrMalformed)
		}
	}
	if len(w.Switches) > 0 {
		n.Switches = w.Switches
	}
	defaults := 0
	for i, p := range w.Partitions {
		if err := p.validate(); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if i > 0 && w.Partitions[i-1].Name >= p.Name {
			return fmt.Errorf("%w: partitions out of order at %q", ErrMalformed, p.Name)
		}
		if p.Default {
			defaults++
		}
		if n.Partitions == nil {
			n.Partitions = map[string]Partition{}
		}
		n.Partitions[p.Name] = p
	}
	if defaults > 1 {
		return fmt.Errorf("%w: %d default partitions", ErrMalformed, defaults)
	}
	*s = *n
	return nil
}

// jobJSON is a job as the snapshot holds it. The tasks of an array share one spec (submit_job
// gives each the array's), and a task whose spec is the first task's names that task in
// spec_of instead of repeating it: an array of 1,000 tasks of a 64 KiB spec made a 60 MB
// snapshot. A snapshot written before spec_of existed has every spec in full, and restores.
type jobJSON struct {
	*Job
	// SpecOf is the ID of the task whose spec this one shares; its own is then left zero,
	// which Job's encoding omits (no job has a zero spec: every one has a command).
	SpecOf uint64 `json:"spec_of,omitempty"`
}

// resolveSpec gives the decoded job its spec: its own, or that of the task spec_of names,
// which must be an earlier task of the same array with a spec of its own. first holds each
// array's first task seen, and tasks whose spec equals it share its strings in memory.
func (jw jobJSON) resolveSpec(first map[uint64]*Job) error {
	j := jw.Job
	f := first[j.ArrayJobID]
	switch {
	case jw.SpecOf != 0 && !reflect.ValueOf(j.Spec).IsZero():
		return fmt.Errorf("%w: job %d has a spec and spec_of %d", ErrMalformed, j.ID, jw.SpecOf)
	case jw.SpecOf != 0:
		if !j.InArray() || f == nil || f.ID != jw.SpecOf {
			return fmt.Errorf("%w: job %d: spec_of %d does not name the first task of its array", ErrMalformed, j.ID, jw.SpecOf)
		}
		j.Spec = f.Spec.clone()
	case f != nil && sameSpec(&f.Spec, &j.Spec):
		j.Spec = f.Spec.clone() // one copy of the strings for the whole array
	}
	if j.InArray() && f == nil {
		first[j.ArrayJobID] = j
	}
	return nil
}

// sameSpec reports whether two specs are equal (for arrays' tasks, their strings are shared,
// so this is quick).
func sameSpec(a, b *JobSpec) bool { return reflect.DeepEqual(a, b) }

func compareJobs(a, b *Job) int {
	if c := cmp.Compare(b.Spec.Priority, a.Spec.Priority); c != 0 {
		return c // higher priority first
	}
	if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
