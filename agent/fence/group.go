package fence

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/shoal-hpc/shoal/internal/procstat"
)

// Group is one process group the guard stops: its number, which is its
// leader's pid, and its leader's start time, which tells the group apart
// from a later one under the same number. A pid is reused once its
// process is gone, by any process of the machine; a guard that stopped
// groups by number alone would, after the job's group ended, stop
// whatever group took the number next.
type Group struct {
	Pgid int `json:"pgid"`
	// Start is the leader's start time in clock ticks since boot
	// (/proc/PID/stat field 22) when the group was written to the lease;
	// 0 when the leader was gone by then, a group the guard never signals.
	Start uint64 `json:"start_ticks"`
}

// errGone says a group is no longer the one registered: its leader has
// exited (and the number may be another's), or left the group.
var errGone = errors.New("process group is gone")

// signalGroup sends sig to group g only if g's leader still runs, with
// the start time recorded, as the leader of group g.Pgid; errGone when
// not. A group is signalled by number (kill(-pgid)), which a pidfd cannot
// do; the pidfd pins the check to one process instead:
//
//  1. pidfd_open(pgid) refers to the process holding the number now;
//  2. its /proc stat shows the recorded start time and group;
//  3. sig goes to the leader through the pidfd, which reaches that process
//     or none, never a successor; its success says the leader was alive
//     after step 2, so steps 1 to 3 saw one process: the job's leader;
//  4. kill(-pgid, sig) reaches the rest of the group.
//
// A group number cannot be reused while any member of the group lives,
// and a zombie leader still holds it. So the window left is the leader
// exiting, being reaped, every other member exiting, and a new process
// taking the number and making itself a group leader, all between steps 3
// and 4: microseconds. For SIGSTOP the window is narrower still: the
// leader is stopped at step 3 and cannot exit unless something SIGKILLs it
// in those microseconds.
//
// Without pidfds (Linux before 5.3, or a seccomp filter that refuses
// them: usePidfd false) the leader is checked in /proc and signalled by
// number, which widens the window by the time from the /proc read to the
// kill: still microseconds, against the hour a lapse is enforced.
func signalGroup(g Group, sig unix.Signal, stat func(int) (procstat.Stat, error), usePidfd bool) error {
	if g.Pgid <= 1 || g.Start == 0 {
		return errGone
	}
	fd := -1
	if usePidfd {
		var err error
		fd, err = unix.PidfdOpen(g.Pgid, 0)
		switch {
		case errors.Is(err, unix.ESRCH):
			return errGone
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			return errNoPidfd
		case err != nil:
			return fmt.Errorf("pidfd of the leader of group %d: %w", g.Pgid, err)
		}
		defer unix.Close(fd)
	}
	st, err := stat(g.Pgid)
	if err != nil {
		return errGone // no /proc entry: the leader has exited since step 1
	}
	if st.Start != g.Start || st.Pgrp != g.Pgid {
		return errGone
	}
	if usePidfd {
		err = unix.PidfdSendSignal(fd, sig, nil, 0)
	} else {
		err = unix.Kill(g.Pgid, sig)
	}
	if errors.Is(err, unix.ESRCH) {
		return errGone
	}
	if err != nil {
		return fmt.Errorf("signal the leader of group %d: %w", g.Pgid, err)
	}
	if err := unix.Kill(-g.Pgid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("signal group %d: %w", g.Pgid, err)
	}
	return nil
}

// errNoPidfd says the kernel would not open a pidfd.
var errNoPidfd = errors.New("no pidfd")

// groups pairs l's process groups with their leaders' start times: those
// l.Groups records, else those in prev (the lease this one replaces: a
// group keeps the start time it had when first written), else read from
// stat now. The agent writes a group into the lease once it has started
// its leader and before it reaps it, so the leader read then is the job's.
func groups(l Lease, prev []Group, stat func(int) (procstat.Stat, error)) []Group {
	out := make([]Group, 0, len(l.Pgids))
	for _, p := range l.Pgids {
		g, ok := findGroup(l.Groups, p)
		if !ok {
			g, ok = findGroup(prev, p)
		}
		if !ok {
			g = Group{Pgid: p}
			if st, err := stat(p); err == nil {
				g.Start = st.Start // a zombie's too: it holds the number until reaped
			}
		}
		out = append(out, g)
	}
	return out
}

func findGroup(gs []Group, pgid int) (Group, bool) {
	for _, g := range gs {
		if g.Pgid == pgid {
			return g, true
		}
	}
	return Group{}, false
}
