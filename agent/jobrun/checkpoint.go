package jobrun

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// jobEnv is what shoal adds to the environment of every process of an attempt (the
// allocation's description last, allocationEnv): the process count and, for an elastic job,
// the checkpoint protocol's variables (where to write and read the state, whether this
// attempt restarts from it, the iterations to reach). The job capability is not among them:
// each node names its own file of it (withCapabilityFile).
func (n *Node) jobEnv(j *raftfsm.Job, att *raftfsm.Attempt, k Key) []string {
	env := []string{"SHOAL_NP=" + strconv.Itoa(att.NP())}
	if e := j.Spec.Elastic; e != nil {
		restart := "0"
		if Restarting(j, att) {
			restart = "1"
		}
		env = append(env, "SHOAL_CHECKPOINT_DIR="+CheckpointDir(n.cfg.DataDir, j), "SHOAL_RESTART="+restart,
			"SHOAL_ITERATIONS="+strconv.FormatInt(e.Iterations, 10))
	}
	return append(env, allocationEnv(j, att)...)
}

// CheckpointDir is $SHOAL_CHECKPOINT_DIR of an elastic job: one directory for all its
// attempts, inside its working directory (or dataDir/jobs without one) unless the job names
// one. The submit time makes it unique to the job even when another cluster's job had the same
// ID in the same directory.
func CheckpointDir(dataDir string, j *raftfsm.Job) string {
	if d := j.Spec.Elastic.CheckpointDir; d != "" {
		return d
	}
	base := j.Spec.Workdir
	if base == "" {
		base = filepath.Join(dataDir, "jobs")
	}
	return filepath.Join(base, ".shoal-checkpoints", fmt.Sprintf("job%d-%d", j.ID, j.SubmittedAt.Unix()))
}

// Restarting says whether an attempt of an elastic job follows one that ran: its program should
// resume from the checkpoint.
func Restarting(j *raftfsm.Job, att *raftfsm.Attempt) bool {
	for _, p := range j.Attempts {
		if p.N < att.N && !p.StartedAt.IsZero() {
			return true
		}
	}
	return false
}

// makeCheckpointDir creates the job's checkpoint directory as the job's
// owner: the path is the user's choice (--checkpoint-dir, or a
// .shoal-checkpoints in their working directory that may be a symlink),
// so it is created with their permissions, never root's.
func (n *Node) makeCheckpointDir(j *raftfsm.Job) error {
	dir := CheckpointDir(n.cfg.DataDir, j)
	if err := n.asOwner(j.Owner, dir, ""); err != nil {
		return fmt.Errorf("create checkpoint dir %s: %w (give the job a --workdir or --checkpoint-dir its owner may write)", dir, err)
	}
	return nil
}
