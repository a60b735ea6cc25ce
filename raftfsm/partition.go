package raftfsm

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Partitions are named sets of nodes with limits, as Slurm's: an
// administrator sets them (set_partition, delete_partition; root only),
// a job names one (--partition) or gets the default, and the leader
// places it on the partition's nodes only. With no partition set, every
// job may run on every node, as before partitions existed.

// Partition is one partition.
type Partition struct {
	Name string `json:"name"`
	// Nodes are the node names it holds, sorted; empty holds every node.
	Nodes []string `json:"nodes,omitempty"`
	// Default makes it the partition of a job that names none; at most
	// one partition is the default.
	Default bool `json:"default,omitempty"`
	// MaxTime is the longest time limit a job may ask for; 0 is none.
	MaxTime time.Duration `json:"max_time,omitempty"`
	// DefaultTime is the limit of a job that asks for none; 0 gives such a
	// job MaxTime (as Slurm does).
	DefaultTime time.Duration `json:"default_time,omitempty"`
	// MaxNodes is the most nodes one job may take; 0 is no bound.
	MaxNodes int `json:"max_nodes,omitempty"`
	// AllowUsers are the users who may submit to it; empty is everyone.
	// Root always may.
	AllowUsers []string `json:"allow_users,omitempty"`
	// NoOversubscribe refuses jobs that ask to share cores (Slurm's
	// OverSubscribe=NO).
	NoOversubscribe bool `json:"no_oversubscribe,omitempty"`
	// LoadThreshold replaces the cluster's overload bound (load per core
	// above which a node counts as overloaded) for its jobs: a partition
	// of desktops that are always busy may raise it; 0 keeps the default.
	LoadThreshold float64 `json:"load_threshold,omitempty"`
}

// Bounds of a partition.
const (
	MaxPartitions     = 256
	MaxPartitionNodes = 65536
	maxPartitionName  = 64
)

// SetPartition (set_partition) creates the partition or replaces it whole. Only root may.
type SetPartition struct {
	User      string    `json:"user"`
	Partition Partition `json:"partition"`
}

// DeletePartition (delete_partition) removes a partition no queued or running job names. Only root may.
type DeletePartition struct {
	User string `json:"user"`
	Name string `json:"name"`
}

func (p *Partition) validate() error {
	switch {
	case p.Name == "" || len(p.Name) > maxPartitionName:
		return fmt.Errorf("%w: partition name %q, want 1 to %d characters", ErrInvalid, p.Name, maxPartitionName)
	case !validPartitionName(p.Name):
		return fmt.Errorf("%w: partition name %q: use letters, digits, '-', '_' and '.'", ErrInvalid, p.Name)
	case len(p.Nodes) > MaxPartitionNodes:
		return fmt.Errorf("%w: partition %s: %d nodes, at most %d", ErrInvalid, p.Name, len(p.Nodes), MaxPartitionNodes)
	case p.MaxTime < 0 || p.DefaultTime < 0:
		return fmt.Errorf("%w: partition %s: negative time", ErrInvalid, p.Name)
	case p.MaxTime > 0 && p.DefaultTime > p.MaxTime:
		return fmt.Errorf("%w: partition %s: default time %s above its maximum %s", ErrInvalid, p.Name, p.DefaultTime, p.MaxTime)
	case p.MaxNodes < 0:
		return fmt.Errorf("%w: partition %s: max nodes %d", ErrInvalid, p.Name, p.MaxNodes)
	case p.LoadThreshold < 0 || p.LoadThreshold > 1000:
		return fmt.Errorf("%w: partition %s: load threshold %g, want 0 (the default) to 1000", ErrInvalid, p.Name, p.LoadThreshold)
	}
	if !slices.IsSorted(p.Nodes) || len(slices.Compact(slices.Clone(p.Nodes))) != len(p.Nodes) {
		return fmt.Errorf("%w: partition %s: nodes are not sorted and distinct", ErrInvalid, p.Name)
	}
	for _, n := range p.Nodes {
		if n == "" {
			return fmt.Errorf("%w: partition %s names an empty node", ErrInvalid, p.Name)
		}
	}
	return nil
}

func validPartitionName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func (p Partition) clone() Partition {
	p.Nodes, p.AllowUsers = slices.Clone(p.Nodes), slices.Clone(p.AllowUsers)
	return p
}

func (s *State) setPartition(_ time.Time, b *SetPartition) (Result, error) {
	if b.User != RootUser {
		return Result{}, fmt.Errorf("%w: only root sets partitions, not %q", ErrNotOwner, b.User)
	}
	p := b.Partition.clone()
	if len(p.Nodes) == 0 {
		p.Nodes = nil
	}
	if len(p.AllowUsers) == 0 {
		p.AllowUsers = nil
	}
	if err := p.validate(); err != nil {
		return Result{}, err
	}
	if _, ok := s.Partitions[p.Name]; !ok && len(s.Partitions) >= MaxPartitions {
		return Result{}, fmt.Errorf("%w: %d partitions, at most %d", ErrInvalid, len(s.Partitions), MaxPartitions)
	}
	if old, ok := s.Partitions[p.Name]; ok && partitionEqual(old, p) {
		return Result{Noop: true}, nil
	}
	parts := maps.Clone(s.Partitions)
	if parts == nil {
		parts = map[string]Partition{}
	}
	if p.Default {
		for name, q := range parts {
			if q.Default && name != p.Name {
				q.Default = false // one default: the newest
				parts[name] = q
			}
		}
	}
	parts[p.Name] = p
	s.Partitions = parts
	return Result{}, nil
}

func partitionEqual(a, b Partition) bool {
	return a.Name == b.Name && slices.Equal(a.Nodes, b.Nodes) && a.Default == b.Default && a.MaxTime == b.MaxTime &&
		a.DefaultTime == b.DefaultTime && a.MaxNodes == b.MaxNodes && slices.Equal(a.AllowUsers, b.AllowUsers) &&
		a.NoOversubscribe == b.NoOversubscribe && a.LoadThreshold == b.LoadThreshold
}

func (s *State) deletePartition(_ time.Time, b *DeletePartition) (Result, error) {
	if b.User != RootUser {
		return Result{}, fmt.Errorf("%w: only root deletes partitions, not %q", ErrNotOwner, b.User)
	}
	if _, ok := s.Partitions[b.Name]; !ok {
		return Result{}, fmt.Errorf("%w: no partition %q", ErrInvalid, b.Name)
	}
	for _, id := range s.SortedJobIDs() {
		if j := s.Jobs[id]; !j.State.Terminal() && j.Spec.Partition == b.Name {
			return Result{}, fmt.Errorf("%w: job %d (%s) is in partition %s: let it end or cancel it first", ErrWrongState, j.ID, j.State, b.Name)
		}
	}
	parts := maps.Clone(s.Partitions)
	delete(parts, b.Name)
	s.Partitions = parts
	if len(parts) == 0 {
		s.Partitions = nil
	}
	return Result{}, nil
}

// DefaultPartition is the name of the default partition, "" when none is.
func (s *State) DefaultPartition() string {
	for _, name := range slices.Sorted(maps.Keys(s.Partitions)) {
		if s.Partitions[name].Default {
			return name
		}
	}
	return ""
}

// applyPartition gives a submitted spec its partition (the default when
// it names none) and holds it to the partition's limits: a time limit
// within its maximum (the default time when the job asks none), no more
// nodes than it allows, an owner it admits, no oversubscription where it
// refuses it.
func (s *State) applyPartition(owner string, sp *JobSpec) error {
	if sp.Partition == "" {
		sp.Partition = s.DefaultPartition()
		if sp.Partition == "" {
			return nil
		}
	}
	p, ok := s.Partitions[sp.Partition]
	if !ok {
		names := slices.Sorted(maps.Keys(s.Partitions))
		if len(names) == 0 {
			return fmt.Errorf("%w: no partition %q: this cluster has none (leave --partition out)", ErrInvalid, sp.Partition)
		}
		return fmt.Errorf("%w: no partition %q (there are: %v)", ErrInvalid, sp.Partition, names)
	}
	if len(p.AllowUsers) > 0 && owner != RootUser && !slices.Contains(p.AllowUsers, owner) {
		return fmt.Errorf("%w: %s may not submit to partition %s", ErrNotOwner, owner, p.Name)
	}
	if sp.Timeout == 0 {
		sp.Timeout = p.DefaultTime
		if sp.Timeout == 0 {
			sp.Timeout = p.MaxTime
		}
	}
	if p.MaxTime > 0 && sp.Timeout > p.MaxTime {
		return fmt.Errorf("%w: time limit %s is above partition %s's maximum %s: ask for less", ErrInvalid, sp.Timeout, p.Name, p.MaxTime)
	}
	if p.MaxNodes > 0 {
		if nodes := sp.minNodes(); nodes > p.MaxNodes {
			return fmt.Errorf("%w: the job needs %d nodes, partition %s allows %d per job", ErrInvalid, nodes, p.Name, p.MaxNodes)
		}
	}
	if p.NoOversubscribe && sp.Oversubscribe {
		return fmt.Errorf("%w: partition %s does not let jobs share cores: leave --oversubscribe out", ErrInvalid, p.Name)
	}
	return nil
}

// minNodes is how many nodes the job takes at least: NP over PPN when it
// fixes PPN, its hostfile's hosts, else 1 (placement may pack it on one).
func (sp *JobSpec) minNodes() int {
	switch {
	case len(sp.Hostfile) > 0:
		return len(sp.Hostfile)
	case sp.PPN > 0:
		return (sp.NP + sp.PPN - 1) / sp.PPN
	}
	return 1
}

// PartitionOf is the partition a job runs in and whether one is set.
func (s *State) PartitionOf(j *Job) (Partition, bool) {
	if j.Spec.Partition == "" {
		return Partition{}, false
	}
	p, ok := s.Partitions[j.Spec.Partition]
	return p, ok
}

// Holds says whether node belongs to the partition.
func (p Partition) Holds(node string) bool {
	if len(p.Nodes) == 0 {
		return true
	}
	_, ok := slices.BinarySearch(p.Nodes, node)
	return ok
}
