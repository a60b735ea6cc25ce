package jobrun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// procMarker is set in the environment of every job process this node
// starts. MPI launchers put ranks in sessions of their own (Hydra's proxy
// calls setsid for each), so a process-group kill does not reach them, and
// a rank whose proxy died is re-parented to init. The marker finds them
// all: SHOAL_PROC=<instance>:<job>:<attempt>. Launchers must not forward it
// (see runMPI), so each rank carries the marker of the node it runs on.
const procMarker = "SHOAL_PROC"

func (n *Node) markerFor(k Key) string {
	return fmt.Sprintf("%s=%s:%d:%d", procMarker, n.instance(), k.Job, k.Attempt)
}

// instance names this agent among all agents of the machine: its node name
// and data directory. It survives a restart (so a restarted agent sweeps
// what its previous life left) and differs between agents that share a
// machine, as test clusters do.
func (n *Node) instance() string { return instanceOf(n.cfg.Name, n.cfg.DataDir) }

func instanceOf(name, dataDir string) string {
	h := sha256.Sum256([]byte(name + "\x00" + dataDir))
	return name + "-" + hex.EncodeToString(h[:4])
}

// markedProcs scans /proc for processes carrying this node's marker,
// grouped by attempt. Processes it may not read (other users' when the
// agent is not root) are skipped.
func (n *Node) markedProcs() map[Key][]int {
	out := map[Key][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	prefix := []byte(procMarker + "=" + n.instance() + ":")
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			rest, ok := bytes.CutPrefix(kv, prefix)
			if !ok {
				continue
			}
			job, att, ok := strings.Cut(string(rest), ":")
			j, err1 := strconv.ParseUint(job, 10, 64)
			n, err2 := strconv.Atoi(att)
			if ok && err1 == nil && err2 == nil {
				k := Key{Job: j, Attempt: n}
				out[k] = append(out[k], pid)
			}
			break
		}
	}
	return out
}

// sweepEnded kills every marked process of an attempt that has ended in
// the state as it is once /proc has been read: beside the reconciler, an
// attempt may have become live since it last looked, and its processes
// must live. An attempt's processes start only once this node has seen it
// running, so an attempt the state does not show live has none that may.
func (n *Node) sweepEnded() {
	found := n.markedProcs()
	var ended []Key
	n.d.State.View(func(s *raftfsm.State) {
		for k := range found {
			if AttemptEndedIn(s, k) {
				ended = append(ended, k)
			}
		}
	})
	for _, k := range ended {
		n.log.Info("killing stray processes of an attempt that is no longer live", "job", k.Job, "attempt", k.Attempt, "pids", found[k])
		for _, pid := range found[k] {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sweep kills every marked process of an attempt that is not live: ranks
// that escaped their process group, and leftovers from before an agent
// restart.
func (n *Node) sweep(live map[Key]bool) {
	for k, pids := range n.markedProcs() {
		if live[k] {
			continue
		}
		n.log.Info("killing stray processes of an attempt that is no longer live", "job", k.Job, "attempt", k.Attempt, "pids", pids)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
