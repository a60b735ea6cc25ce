package jobrun

import (
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// pickGPUs chooses the GPUs attempt att of j gets on this node: the
// lowest indices of the node's Config.GPUs that no other live attempt
// holds here in st, as many as its processes here need. nil when it
// needs none, or when the node has fewer free than it needs (its
// inventory and placement's disagree: the attempt runs unbound rather
// than not at all, and the log says so).
func (n *Node) pickGPUs(st *raftfsm.State, j *raftfsm.Job, att *raftfsm.Attempt) []int {
	need := att.GPUsNeeded(j.Spec, n.cfg.Name)
	if need == 0 || n.cfg.GPUs == 0 {
		return nil
	}
	used := raftfsm.GPUsInUse(st, n.cfg.Name, j.ID)
	var idx []int
	for i := 0; i < n.cfg.GPUs && len(idx) < need; i++ {
		if !used[i] {
			idx = append(idx, i)
		}
	}
	if len(idx) < need {
		n.log.Warn("too few free GPUs to bind: the attempt runs unbound", "job", j.ID, "attempt", att.N, "need", need, "free", len(idx), "gpus", n.cfg.GPUs)
		return nil
	}
	return idx
}

// gpuEnv is what tells a process of the attempt which GPUs are its own,
// in the variables CUDA, ROCm, Intel's Level Zero and Slurm's scripts read: the indices it
// holds here, or none at all on a node with GPUs when it holds none (a
// job that asked for no GPU must not take one from a job that did).
// Devices are numbered in PCI bus order, as nvidia-smi numbers them;
// CUDA_VISIBLE_DEVICES names them by Config.CUDAIDs where the node has
// them (MIG instances, which CUDA knows by UUID only).
// Nothing is set on a node without GPUs.
func (n *Node) gpuEnv(att *raftfsm.Attempt) []string {
	if n.cfg.GPUs == 0 {
		return nil
	}
	var ids, cuda []string
	for _, i := range att.GPUsOn(n.cfg.Name) {
		ids = append(ids, strconv.Itoa(i))
		if i < len(n.cfg.CUDAIDs) {
			cuda = append(cuda, n.cfg.CUDAIDs[i])
		} else {
			cuda = append(cuda, strconv.Itoa(i))
		}
	}
	list := strings.Join(ids, ",")
	env := []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=" + strings.Join(cuda, ","), "ROCR_VISIBLE_DEVICES=" + list,
		"ZE_AFFINITY_MASK=" + list, "GPU_DEVICE_ORDINAL=" + list, "SHOAL_GPUS=" + list}
	if list != "" {
		env = append(env, "SLURM_JOB_GPUS="+list) // as slurmd sets it for a job with GPUs
	}
	return env
}

// gpuVars are the variables gpuEnv may set. Their values are the node's
// own: an MPI launcher must not carry the head's to the ranks of other
// nodes, whose agents set their own (perNodeVars).
var gpuVars = []string{"CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
	"GPU_DEVICE_ORDINAL", "SHOAL_GPUS", "SLURM_JOB_GPUS"}
