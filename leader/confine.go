package leader

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Jobs with a memory limit: placement counts --mem against a
// node's memory, as Slurm's select/cons_tres does with RealMemory. A
// node's free memory is its total less what the live jobs with a memory
// limit hold there (raft's HeldMemory, plus this round's placements); a
// node that does not confine its jobs cannot enforce the limit and never
// gets such a job.

// memoryFit hides from job j the nodes that cannot give it its memory, and
// for --mem-per-rank caps a node's free slots by its free memory. When no
// node is left it returns why the job waits.
func memoryFit(snap placement.Snapshot, confined map[string]bool, held map[string]uint64, j *raftfsm.Job) (placement.Snapshot, string) {
	sp := &j.Spec
	out := snap
	out.Nodes = slices.Clone(snap.Nodes)
	perNode := sp.MemPerNode
	if sp.MemPerRank > 0 {
		perNode = sp.MemPerRank * uint64(max(sp.PPN, 1))
	}
	var short, unconfined []string
	fits := 0
	for i := range out.Nodes {
		n := &out.Nodes[i]
		if !n.Alive {
			continue
		}
		if !confined[n.Name] {
			n.Alive = false
			unconfined = append(unconfined, n.Name)
			continue
		}
		free := n.MemTotal - min(n.MemTotal, held[n.Name])
		if free < perNode {
			n.Alive = false
			short = append(short, fmt.Sprintf("%s %s free", n.Name, sizeString(free)))
			continue
		}
		if sp.MemPerRank > 0 && sp.PPN == 0 {
			// At most free/perRank ranks here, of CPUs() cores each: hold the node's other cores.
			logical := max(n.Threads, n.Cores)
			ranks := int(min(free/sp.MemPerRank, uint64(logical)))
			n.HeldSlots = max(n.HeldSlots, logical-min(logical, ranks*sp.CPUs()))
		}
		fits++
	}
	if fits > 0 {
		return out, ""
	}
	need := sizeString(perNode) + " per node (--mem)"
	if sp.MemPerRank > 0 {
		need = sizeString(sp.MemPerRank) + " per process (--mem-per-rank)"
	}
	why := "waiting for memory: the job needs " + need
	if len(short) > 0 {
		why += "; " + strings.Join(short, ", ")
	}
	if len(unconfined) > 0 {
		why += "; not confining jobs in cgroups, so never given a job with a memory limit: " + strings.Join(unconfined, ", ")
	}
	return out, why
}

// holdMemory adds a placement's memory to held, so that later jobs of the
// same round see it taken.
func holdMemory(held map[string]uint64, sp *raftfsm.JobSpec, hosts []raftfsm.Host) {
	if !sp.HasMem() {
		return
	}
	for _, h := range hosts {
		held[h.Node] += sp.MemOn(h.NP)
	}
}

// sizeString is a byte count in mebibytes, as --mem reads a plain number.
func sizeString(b uint64) string { return fmt.Sprintf("%dM", b>>20) }

// confinedNodes maps each node gossip knows to whether it confines its jobs.
func confinedNodes(nodes []Node) map[string]bool {
	out := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		out[n.Name] = n.Confined
	}
	return out
}
