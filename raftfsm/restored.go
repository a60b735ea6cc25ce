package raftfsm

import (
	"fmt"
	"time"
)

// Restored is the state an operator's snapshot restore installs: the
// snapshot's state snap, made safe to run beside what the cluster (whose
// state is live) may still be running. snap is not changed.
//
//   - Every attempt the snapshot shows launching or running is failed
//     with a reason that names the restore, and its job requeued; the
//     attempt does not count against the job's limit (Uncounted): the
//     restore, not the job, ended it. Its
//     processes may have ended long ago, or may still run under the
//     state being replaced; either way no node may start it again under
//     its number.
//   - No job ID or attempt number the live cluster has given out is given
//     out again: nodes key processes, cgroups and markers by job and
//     attempt, and a number reused while its first holder still runs
//     would collide with it. NextJobID is at least live's, and a job whose
//     live record reached a later attempt gets the live records of those
//     attempts, ended and uncounted, so that its next attempt comes after.
//
// takenAt is when the snapshot was saved and at the restore's time; both
// appear only in reasons.
func Restored(snap, live *State, takenAt, at time.Time) *State {
	out := snap.Clone()
	if live != nil && live.NextJobID > out.NextJobID {
		out.NextJobID = live.NextJobID
	}
	for _, id := range out.SortedJobIDs() {
		j := out.Jobs[id]
		var lj *Job
		if live != nil {
			lj = live.Jobs[id]
		}
		floor := 0
		if lj != nil {
			floor = min(lj.Attempt, len(lj.Attempts))
		}
		live := j.State.Live()
		if !live && (j.State.Terminal() || floor <= j.Attempt) {
			continue
		}
		n := j.clone()
		if live {
			cur := n.Current()
			reason := fmt.Sprintf("the cluster's state was restored from a snapshot taken %s, in which attempt %d was %s; it is not run again under its number",
				takenAt.UTC().Format(time.RFC3339), cur.N, cur.State)
			cur.State, cur.Reason, cur.EndedAt, cur.Uncounted = StateFailed, reason, at, true
			n.State, n.Reason, n.StartedAt = StateQueued, fmt.Sprintf("attempt %d failed: %s; requeued", cur.N, reason), time.Time{}
			n.WaitReason, n.WaitSince = "", time.Time{}
		}
		for a := n.Attempt + 1; a <= floor; a++ {
			// The live record of the attempt, ended: where it ran, for the
			// job's history and for nodes that still run it.
			p := lj.Attempts[a-1].clone()
			if !p.Ended() {
				p.State, p.EndedAt = StateFailed, at
			}
			p.Reason = fmt.Sprintf("attempt %d ran after the snapshot was taken, before the restore; the number is not used again", a)
			p.Uncounted = true
			n.Attempts = append(n.Attempts, p)
		}
		n.Attempt = max(n.Attempt, floor)
		out.Jobs[id] = n
	}
	return out
}

// RestoredSnapshot is Restored on an encoded snapshot (as Persist writes
// it): it returns the snapshot to hand raft's restore, at the same index.
// Errors wrap ErrBadSnapshot.
func RestoredSnapshot(data []byte, live *State, takenAt, at time.Time) ([]byte, error) {
	index, st, err := decodeSnapshot(data)
	if err != nil {
		return nil, err
	}
	return encodeSnapshot(index, Restored(st, live, takenAt, at))
}
