package jobrun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// The processes of an attempt get its capability in a file, named by
// SHOAL_JOB_CAP_FILE, never in their environment. An environment is
// copied into everything a job prints about itself (`env` in a debug
// line), into core dumps and into every child; a job's output may be read
// by others where the site publishes it. The file is the owner's, mode
// 0600, so only the job's owner and root read it, and it goes when the
// attempt ends.
//
// Each node writes its own: one directory of root's per agent (a fresh,
// randomly named one in the sticky /tmp, which no other user may rename or
// replace), mode 0711 so the owner may pass through but nobody may list or
// create, and in it one file per attempt, created by root with O_EXCL and
// handed to the owner with fchown on its descriptor. Nothing the owner
// controls is ever followed or chowned by path. The directory carries the
// agent's tag (tmpdirs.go): one a killed agent left goes at its next start.

// CapFileVar names the file holding the attempt's capability.
const CapFileVar = "SHOAL_JOB_CAP_FILE"

// capFiles are this node's capability files, by attempt as placed.
type capFiles struct {
	mu    sync.Mutex
	dir   string // made on first use; "" until then
	files map[capKey]string
}

// capKey names an attempt as raft placed it: after a snapshot restore sets
// the next job ID back, another attempt gets the same job and attempt
// numbers, with another capability (it covers the raft index of the entry
// that placed the attempt), and must not be handed the old one's file.
type capKey struct {
	Key
	Placed uint64 // raftfsm.Attempt.PlacedIndex
}

// capKeyIn is the key of k's attempt as s holds it (Placed 0 when s holds
// none).
func capKeyIn(s *raftfsm.State, k Key) capKey {
	ck := capKey{Key: k}
	if j := s.Jobs[k.Job]; j != nil && k.Attempt >= 1 && k.Attempt <= len(j.Attempts) {
		ck.Placed = j.Attempts[k.Attempt-1].PlacedIndex
	}
	return ck
}

// capabilityFile returns the file of attempt att of job j on this node,
// writing it the first time a process of the attempt starts here. cred is
// the owner's identity (nil: the agent's own user's job).
func (n *Node) capabilityFile(j *raftfsm.Job, att *raftfsm.Attempt, cred *jobexec.Cred) (string, error) {
	k := capKey{Key: Key{Job: j.ID, Attempt: att.N}, Placed: att.PlacedIndex}
	c := &n.caps
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.files[k]; ok {
		return p, nil
	}
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "shoal-caps-"+n.tmpTag+"-")
		if err != nil {
			return "", fmt.Errorf("capability dir: %w", err)
		}
		if err := os.Chmod(dir, 0o711); err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("capability dir: %w", err)
		}
		c.dir, c.files = dir, map[capKey]string{}
	}
	name := fmt.Sprintf("job%d.%d.%d", k.Job, k.Attempt, k.Placed)
	if _, err := writeOwnedFile(c.dir, name, n.d.JobCapability(j, att)+"\n", cred); err != nil {
		return "", fmt.Errorf("capability of job %d attempt %d: %w", k.Job, k.Attempt, err)
	}
	p := filepath.Join(c.dir, name)
	c.files[k] = p
	return p, nil
}

// removeCapabilityFiles removes the files of attempts that are no longer
// live, or no longer the attempt raft holds under their numbers (all of
// them, and the directory, when all is set): an ended attempt's capability
// is refused anyway, and its file need not outlive it.
func (n *Node) removeCapabilityFiles(all bool) {
	c := &n.caps
	c.mu.Lock()
	keys := keysOf(c.files)
	c.mu.Unlock()
	ended := keys
	if !all {
		ended = nil
		n.d.State.View(func(s *raftfsm.State) {
			for _, k := range keys {
				if AttemptEndedIn(s, k.Key) || capKeyIn(s, k.Key) != k {
					ended = append(ended, k)
				}
			}
		})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range ended {
		if err := os.Remove(c.files[k]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			n.log.Warn("remove capability file", "file", c.files[k], "err", err)
		}
		delete(c.files, k)
	}
	if all && c.dir != "" {
		if err := os.RemoveAll(c.dir); err != nil {
			n.log.Warn("remove capability dir", "dir", c.dir, "err", err)
		}
		c.dir = ""
	}
}

// withCapabilityFile is env with SHOAL_JOB_CAP_FILE naming this node's file
// of the attempt, last: the job helper keeps the last entry of each name
// (jobexec's lastWins), so it wins over any value another node put in the
// variables it sent along, or the job's own --env.
func (n *Node) withCapabilityFile(env []string, j *raftfsm.Job, k Key, cred *jobexec.Cred) ([]string, error) {
	if k.Attempt < 1 || k.Attempt > len(j.Attempts) {
		return nil, fmt.Errorf("job %d has no attempt %d", j.ID, k.Attempt)
	}
	p, err := n.capabilityFile(j, &j.Attempts[k.Attempt-1], cred)
	if err != nil {
		return nil, err
	}
	return append(env, CapFileVar+"="+p), nil
}
