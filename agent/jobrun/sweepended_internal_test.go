package jobrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// The upkeep beside the reconciler kills the marked processes of an
// attempt that has ended in the state, and spares those of one that is
// live in the state when it looks, whatever the reconciler saw before.
func TestSweepEndedJudgesByTheStateNow(t *testing.T) {
	t.Parallel()
	f := raftfsm.New()
	apply := applier(t, f)
	n := testNode(t, f, func() {})
	var ids []uint64
	for _, req := range []string{"ends", "lives"} {
		id := apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: req, Owner: "alice",
			Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}}).JobID
		apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}})
		apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: "n0"})
		apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1})
		ids = append(ids, id)
	}
	code := 0
	apply(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: ids[0], Attempt: 1, ExitCode: &code})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := func(k Key) (*exec.Cmd, chan error) {
		cmd := exec.CommandContext(ctx, "sleep", "600")
		cmd.Env = []string{n.markerFor(k)}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, done
	}
	_, endedDone := start(Key{Job: ids[0], Attempt: 1})
	live, liveDone := start(Key{Job: ids[1], Attempt: 1})
	defer live.Process.Kill()
	for ctx.Err() == nil && len(n.markedProcs()) < 2 {
		time.Sleep(5 * time.Millisecond) // the polling period of a condition: the processes' environ readable
	}
	n.sweepEnded()
	select {
	case <-endedDone:
	case <-ctx.Done():
		t.Fatal("the process of the ended attempt was not killed")
	}
	select {
	case err := <-liveDone:
		t.Fatalf("the process of the live attempt was killed: %v", err)
	default:
	}
	if sentKill(live.Process.Pid) {
		t.Fatal("the process of the live attempt was sent SIGKILL")
	}
}

// sentKill reports whether process pid is gone, a zombie, or has SIGKILL
// pending: a kill, once sent, shows in one of the three at once, before
// the process has died.
func sentKill(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if strings.HasPrefix(v, "Z") || strings.HasPrefix(v, "X") {
				return true
			}
		case "SigPnd", "ShdPnd":
			if m, err := strconv.ParseUint(v, 16, 64); err == nil && m&(1<<(syscall.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}
