package jobrun

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// AttemptDir is where the head of attempt k keeps its stdout and stderr.
func (n *Node) AttemptDir(k Key) string {
	return filepath.Join(n.cfg.DataDir, "jobs", strconv.FormatUint(k.Job, 10), strconv.Itoa(k.Attempt))
}

// AttemptEnded reports whether attempt k has ended in this node's copy of
// the state (an attempt it does not know counts as ended).
func (n *Node) AttemptEnded(k Key) bool {
	ended := true
	n.d.State.View(func(s *raftfsm.State) {
		j := s.Jobs[k.Job]
		if j == nil || k.Attempt > len(j.Attempts) {
			return
		}
		ended = j.Attempts[k.Attempt-1].Ended()
	})
	return ended
}

// openAttemptLog opens one of an attempt's log files for appending, creating it when missing:
// it never truncates, so output already written for an attempt is never lost.
func openAttemptLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
}
