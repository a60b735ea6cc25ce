package jobrun

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
	"golang.org/x/sys/unix"
)

// ompiTmpdirVars are the Open MPI parameters that set where a daemon puts
// its session directory: ORTE's (4.x; <base>/ompi.<hostname>.<uid>/jf.<job
// family>/...) and PRRTE's (5.x, prted; <base>/prte.<hostname>.<uid>/...).
var ompiTmpdirVars = []string{"OMPI_MCA_orte_tmpdir_base", "PRTE_MCA_prte_tmpdir_base"}

// ompiTmpdirEnv sets every name of the session directory base to dir.
func ompiTmpdirEnv(dir string) []string {
	env := make([]string, len(ompiTmpdirVars))
	for i, v := range ompiTmpdirVars {
		env[i] = v + "=" + dir
	}
	return env
}

// OMPISessionEnv gives the Open MPI daemon (orted) that `shoal rsh` starts
// on this node a session directory base of this agent's own.
//
// Every orted, as it starts and again as it exits, deletes the whole
// session directory of its job family on its host, because it assumes it is
// the only daemon of the job there. Agents sharing a machine (test clusters,
// `make demo`, several shoal nodes per host) put several orteds of one job
// on one host under the same /tmp/ompi.<hostname>.<uid>/jf.<family>: one
// orted then deletes what a sibling is creating (PMIx's dstore directories),
// the sibling's orte_init fails silently (exit 213) after it daemonized, its
// `shoal rsh` has already exited 0, and mpirun waits forever for a daemon
// that is gone. A directory per node and attempt keeps them apart.
//
// A job that sets the variable itself keeps its own value. A batch script
// may run Open MPI steps whatever its --mpi says, so it gets one too.
func (n *Node) OMPISessionEnv(job *raftfsm.Job, k Key) ([]string, error) {
	if (job.Spec.MPI != "openmpi" && !job.Spec.Batch) || slices.ContainsFunc(job.Spec.Env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(ompiTmpdirVars, name)
	}) {
		return nil, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if d, ok := n.ompiDirs[k]; ok {
		if _, err := os.Stat(d.path); err == nil {
			return ompiTmpdirEnv(d.path), nil
		}
	}
	dir, err := os.MkdirTemp("", n.tempPrefix("ompi", k))
	if err != nil {
		return nil, fmt.Errorf("open mpi session dir: %w", err)
	}
	cred, _, err := n.credentialFor(job.Owner)
	if err == nil && cred != nil {
		err = fchownDir(dir, cred)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("open mpi session dir: %w", err)
	}
	n.ompiDirs[k] = ompiDir{path: dir, owner: job.Owner}
	return ompiTmpdirEnv(dir), nil
}

// ompiDir is an attempt's Open MPI session directory and the user it
// belongs to.
type ompiDir struct{ path, owner string }

// fchownDir hands a directory the agent has just created in /tmp (with a
// fresh random name, which no other user can rename or replace there) to
// the job's owner, through a descriptor opened without following links.
func fchownDir(dir string, cred *jobexec.Cred) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, int(cred.UID), int(cred.GID)); err != nil {
		return fmt.Errorf("hand %s to %s: %w", dir, cred, err)
	}
	return nil
}

// removeOMPIDirs removes the session directories of attempts that are no
// longer live (all of them when all is set). The daemons outlive the exec
// that started them, so the directories go when the attempt ends, after the
// sweep has killed what was left of it. Liveness is read afresh: an attempt
// that has ended never becomes live again.
func (n *Node) removeOMPIDirs(all bool) {
	n.mu.Lock()
	keys := make([]Key, 0, len(n.ompiDirs))
	for k := range n.ompiDirs {
		keys = append(keys, k)
	}
	n.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	var ended []Key
	n.d.State.View(func(s *raftfsm.State) {
		for _, k := range keys {
			if j := s.Jobs[k.Job]; all || j == nil || j.Attempt != k.Attempt || !j.State.Live() {
				ended = append(ended, k)
			}
		}
	})
	n.mu.Lock()
	dirs := make([]ompiDir, 0, len(ended))
	for _, k := range ended {
		dirs = append(dirs, n.ompiDirs[k])
		delete(n.ompiDirs, k)
	}
	n.mu.Unlock()
	for _, d := range dirs {
		// The directory is the owner's: remove it as the owner, outside the
		// lock (it starts a helper process).
		if err := n.asOwner(d.owner, "", d.path); err != nil {
			n.log.Warn("remove open mpi session dir", "dir", d.path, "err", err)
		}
	}
}
