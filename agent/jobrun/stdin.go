package jobrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// stdinWait is how long the launcher of a `shoal run` job waits for its
// client to send standard input before rank 0 reads end of file: a client
// that went away must not leave the job blocked on a read for ever.
const stdinWait = time.Minute

// ErrNoStdin marks stdin sent for an attempt that takes none here: not a
// `shoal run` job, not headed by this node, or already given its input.
var ErrNoStdin = errors.New("attempt takes no standard input here")

// openStdin gives the launcher of attempt k of job j a standard input the
// client of `shoal run` feeds (FeedStdin), or nil (the null device) for a
// job that asked for none. The caller closes the returned read end once
// the launcher started and calls done when it ended.
func (n *Node) openStdin(j *raftfsm.Job, k Key) (r *os.File, done func(), err error) {
	if !j.Spec.Stdin {
		return nil, func() {}, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("stdin pipe: %w", err)
	}
	slot := &stdinSlot{w: w}
	n.mu.Lock()
	n.stdin[k] = slot
	n.mu.Unlock()
	timer := time.AfterFunc(stdinWait, func() { // nobody came: end of file
		n.mu.Lock()
		defer n.mu.Unlock()
		if !slot.taken {
			slot.taken = true
			_ = w.Close()
		}
	})
	return r, func() {
		timer.Stop()
		n.mu.Lock()
		if n.stdin[k] == slot {
			delete(n.stdin, k)
		}
		n.mu.Unlock()
		_ = w.Close() // unblocks a client still writing to a launcher that is gone
	}, nil
}

// stdinSlot is the write end of an attempt's standard input, and whether
// a client (or the wait for one) has taken it.
type stdinSlot struct {
	w     *os.File
	taken bool
}

// FeedStdin copies src into the standard input of attempt k's launcher,
// which MPI launchers pass to rank 0, and closes it at src's end. It waits
// for the launcher to start (the client may be faster), up to ctx's end.
func (n *Node) FeedStdin(ctx context.Context, k Key, src io.Reader) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var w *os.File
		n.mu.Lock()
		if slot := n.stdin[k]; slot != nil && !slot.taken {
			slot.taken, w = true, slot.w // one client feeds it
		}
		n.mu.Unlock()
		if w != nil {
			defer w.Close()
			if _, err := io.Copy(w, src); err != nil && !errors.Is(err, os.ErrClosed) {
				return fmt.Errorf("stdin of job %d attempt %d: %w", k.Job, k.Attempt, err)
			}
			return nil
		}
		if n.attemptOver(k) {
			return fmt.Errorf("%w: job %d attempt %d", ErrNoStdin, k.Job, k.Attempt)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// attemptOver reports whether attempt k is no longer live in the state.
func (n *Node) attemptOver(k Key) bool {
	over := true
	n.d.State.View(func(s *raftfsm.State) {
		if j := s.Jobs[k.Job]; j != nil && j.Attempt == k.Attempt && j.State.Live() && j.Spec.Stdin {
			over = false
		}
	})
	return over
}
