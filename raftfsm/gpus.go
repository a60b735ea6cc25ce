package raftfsm

import (
	"fmt"
	"slices"
)

// GPU binding. Placement counts GPUs per node; which of a node's GPUs an
// attempt gets is the node's choice, made when it reserves its slots
// (ack_reservation carries the indices) and kept in the replicated state,
// so that an agent that restarts, and every other agent, knows which
// devices its running attempts hold. The FSM refuses an index another
// live attempt holds on the same node: two nodes' agents, or one agent
// racing itself, cannot hand one GPU to two jobs.

// NodeGPUs are the GPU indices (the node's enumeration order, as
// nvidia-smi lists them) an attempt holds on one node.
type NodeGPUs struct {
	Node    string `json:"node"`
	Indices []int  `json:"indices"`
}

// MaxGPUIndex bounds a GPU index: no node enumerates more devices.
const MaxGPUIndex = 1023

// GPUsPerProc is how many GPUs each of the job's processes needs.
func (s JobSpec) GPUsPerProc() int {
	n := 0
	for _, pe := range s.PEs {
		if pe.Kind == "gpu" {
			n += pe.PerProc
		}
	}
	return n
}

// GPUsNeeded is how many GPUs the attempt needs on node: its processes
// there times each one's need.
func (a *Attempt) GPUsNeeded(spec JobSpec, node string) int {
	per := spec.GPUsPerProc()
	if per == 0 {
		return 0
	}
	for _, h := range a.Hosts {
		if h.Node == node {
			return h.NP * per
		}
	}
	return 0
}

// GPUsOn is the indices the attempt holds on node, nil if none.
func (a *Attempt) GPUsOn(node string) []int {
	for _, g := range a.GPUs {
		if g.Node == node {
			return g.Indices
		}
	}
	return nil
}

// GPUsInUse is the GPU indices live attempts hold on node, other than
// skip's: what a node may not hand out again.
func GPUsInUse(s *State, node string, skip uint64) map[int]bool {
	used := map[int]bool{}
	for id, j := range s.Jobs {
		if id == skip || j.State.Terminal() || j.Spec.GPUsPerProc() == 0 {
			continue
		}
		if a := j.Current(); a != nil && !a.Ended() {
			for _, i := range a.GPUsOn(node) {
				used[i] = true
			}
		}
	}
	return used
}

// checkGPUs validates the indices node acknowledges for attempt a of j:
// as many as it needs there, each once, in bounds, none held by another
// live attempt on the node.
func (s *State) checkGPUs(j *Job, a *Attempt, node string, idx []int) error {
	need := a.GPUsNeeded(j.Spec, node)
	if len(idx) == 0 {
		return nil // a node that binds no GPUs (an agent before binding, or no GPU inventory)
	}
	if len(idx) != need {
		return fmt.Errorf("%w: %d GPU indices for job %d on %s, which needs %d", ErrInvalid, len(idx), j.ID, node, need)
	}
	seen := map[int]bool{}
	used := GPUsInUse(s, node, j.ID)
	for _, i := range idx {
		switch {
		case i < 0 || i > MaxGPUIndex:
			return fmt.Errorf("%w: GPU index %d, want 0..%d", ErrInvalid, i, MaxGPUIndex)
		case seen[i]:
			return fmt.Errorf("%w: GPU index %d given twice", ErrInvalid, i)
		case used[i]:
			return fmt.Errorf("%w: GPU %d of %s is held by another running job", ErrInvalid, i, node)
		}
		seen[i] = true
	}
	return nil
}

// setGPUs records idx as what cur holds on node, keeping a.GPUs sorted by node.
func setGPUs(cur *Attempt, node string, idx []int) {
	if len(idx) == 0 {
		return
	}
	sorted := slices.Sorted(slices.Values(idx))
	i, _ := slices.BinarySearchFunc(cur.GPUs, node, func(g NodeGPUs, n string) int {
		switch {
		case g.Node < n:
			return -1
		case g.Node > n:
			return 1
		}
		return 0
	})
	cur.GPUs = slices.Insert(cur.GPUs, i, NodeGPUs{Node: node, Indices: sorted})
}
