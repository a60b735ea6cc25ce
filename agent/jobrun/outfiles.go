package jobrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
	"github.com/shoal-hpc/shoal/raftfsm"
	"golang.org/x/sys/unix"
)

// outputDrainWait is how long the writers of --output and --error may take
// to drain once the launcher is done (processes the job left behind may
// still hold the pipe; the sweep kills them).
const outputDrainWait = 10 * time.Second

// outputVars are the values of an attempt's output file patterns.
func outputVars(j *raftfsm.Job, node string) jobfmt.OutputVars {
	return jobfmt.OutputVars{JobID: j.ID, ArrayJobID: j.ArrayJobID, TaskID: j.ArrayTaskID, InArray: j.InArray(),
		Node: node, User: j.Owner, Name: j.Spec.Name}
}

// outputFiles sets up the job's --output and --error files: the job helper
// opens them as the job's owner in the job's working directory (so a path
// the owner chose reaches nothing the owner could not write, and a root
// job's path through a user's directory follows none of that user's
// links), hands the descriptors back and exits; the agent then copies the
// job's output into each file and into the attempt's log, which `shoal
// logs` keeps reading. No process of the owner's runs outside the
// attempt's cgroup: the writer used to be a tee of the owner's, which the
// job could ptrace to start processes beyond the cgroup's limits and kill.
// Without --error, stderr goes to the --output file too, as sbatch does.
//
// It returns the writers the job's processes get (the attempt's logs when
// there is no file) and finish, to call once the launch is over: it waits
// for the copies to drain and says whether a file could not be written.
// A file that cannot be opened fails the attempt before the job starts, as
// does one whose helper is still at it when ctx ends or after
// jobexec.OpenFilesTimeout (a hung NFS or FUSE mount).
func (n *Node) outputFiles(ctx context.Context, j *raftfsm.Job, stdout, stderr *os.File) (outW, errW *os.File, finish func() error, err error) {
	outW, errW = stdout, stderr
	if j.Spec.Output == "" && j.Spec.Error == "" {
		return outW, errW, func() error { return nil }, nil
	}
	cred, _, err := n.credentialFor(j.Owner)
	if err != nil {
		return nil, nil, nil, err
	}
	vars := outputVars(j, n.cfg.Name)
	var paths []string
	var logs []*os.File
	if j.Spec.Output != "" {
		paths, logs = append(paths, jobfmt.ExpandPattern(j.Spec.Output, vars)), append(logs, stdout)
	}
	if e := j.Spec.Error; e != "" && (j.Spec.Output == "" || jobfmt.ExpandPattern(e, vars) != paths[0]) {
		paths, logs = append(paths, jobfmt.ExpandPattern(e, vars)), append(logs, stderr)
	}
	spec := n.jobSpec(cred)
	spec.Dir, spec.Create = j.Spec.Workdir, paths
	files, err := jobexec.OpenFiles(ctx, n.cfg.Exec, spec)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--output/--error on %s: %w", n.cfg.Name, err)
	}
	copies := make([]*outputCopy, 0, len(files))
	for i, f := range files {
		c, err := startOutputCopy(f, logs[i], cred)
		if err != nil {
			for _, c := range copies {
				_ = c.wait(time.Now())
			}
			for _, f := range files[i+1:] { // startOutputCopy closed files[i]
				_ = f.Close()
			}
			return nil, nil, nil, err
		}
		copies = append(copies, c)
	}
	ws := make([]*os.File, 0, 2)
	for _, c := range copies {
		ws = append(ws, c.w)
	}
	switch {
	case j.Spec.Output == "":
		errW = ws[0]
	case len(ws) == 1: // no --error, or the same file
		outW, errW = ws[0], ws[0]
	default:
		outW, errW = ws[0], ws[1]
	}
	finish = func() error {
		deadline := time.Now().Add(outputDrainWait)
		var errs []error
		for _, c := range copies {
			errs = append(errs, c.wait(deadline))
		}
		return errors.Join(errs...)
	}
	return outW, errW, finish, nil
}

// outputCopy copies what the job writes to w into an output file and the
// attempt's log.
type outputCopy struct {
	w    *os.File // the job's end
	r    *os.File
	file *os.File
	done chan error
}

// startOutputCopy starts copying into file, which it closes when the copy
// ends or when it cannot start; the writer takes owner's file system
// identity (nil: the agent's own).
func startOutputCopy(file, log *os.File, owner *jobexec.Cred) (*outputCopy, error) {
	r, w, err := os.Pipe()
	if err != nil {
		_ = file.Close()
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	c := &outputCopy{w: w, r: r, file: file, done: make(chan error, 1)}
	go c.run(log, owner)
	return c, nil
}

// run copies until every writer of the pipe is gone, into the log always
// and into the file until it fails (a full disk, the owner's quota): the
// first failure is the copy's result.
//
// The file was opened as its owner, but the agent writes it: the writing
// thread takes the owner's file system identity and drops every
// capability first, so the write is held to what the owner's own would be
// (a root writer passes disk quotas, and ext4 gives the blocks it reserves
// to the fsuid it was told, root by default, as well as to
// CAP_SYS_RESOURCE). The thread stays locked and ends with the goroutine,
// so no other goroutine ever runs with the owner's identity or without
// capabilities. Its end signals no job: helpers are forked from
// spawn's thread, which never ends, since a parent-death signal follows
// the forking thread.
func (c *outputCopy) run(log *os.File, owner *jobexec.Cred) {
	runtime.LockOSThread()
	ferr := becomeOutputWriter(owner)
	buf := make([]byte, 64<<10)
	for {
		k, rerr := c.r.Read(buf)
		if k > 0 {
			_, _ = log.Write(buf[:k])
			if ferr == nil {
				if _, err := c.file.Write(buf[:k]); err != nil {
					ferr = fmt.Errorf("write %s: %w", c.file.Name(), err)
				}
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && !errors.Is(rerr, os.ErrDeadlineExceeded) && ferr == nil {
				ferr = fmt.Errorf("read the job's output for %s: %w", c.file.Name(), rerr)
			}
			break
		}
	}
	if err := c.file.Close(); err != nil && ferr == nil {
		ferr = fmt.Errorf("write %s: %w", c.file.Name(), err)
	}
	_ = c.r.Close()
	c.done <- ferr
}

// wait closes the agent's end of the pipe and waits for the copy to see
// the end of the job's output, or until deadline, when what is left
// unread (processes left behind still writing) is given up.
func (c *outputCopy) wait(deadline time.Time) error {
	_ = c.w.Close()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case err := <-c.done:
		return err
	case <-t.C:
		_ = c.r.SetReadDeadline(time.Now())
		return <-c.done
	}
}

// becomeOutputWriter gives the calling thread, which must be locked and
// must end with its goroutine, owner's file system uid and gid (nil:
// keeps the agent's) and drops its capabilities. Linux credentials are per
// thread: setfsuid(2), setfsgid(2) and capset(2) on pid 0 change only the
// caller's.
func becomeOutputWriter(owner *jobexec.Cred) error {
	if owner != nil {
		// setfsuid(2) and setfsgid(2) report no failure: a call with
		// -1, which changes nothing, shows the value in force.
		_ = unix.Setfsgid(int(owner.GID))
		_ = unix.Setfsuid(int(owner.UID))
		gid, _ := unix.SetfsgidRetGid(-1)
		uid, _ := unix.SetfsuidRetUid(-1)
		if uid != int(owner.UID) || gid != int(owner.GID) {
			return fmt.Errorf("the output writer cannot take %s's file system identity (fsuid %d, fsgid %d)", owner, uid, gid)
		}
	}
	return dropThreadCapabilities()
}

// dropThreadCapabilities empties the calling thread's capability sets.
// An agent that is not root has none to drop.
func dropThreadCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop the output writer's capabilities: %w", err)
	}
	return nil
}
