// Package fence stops a node's job processes when its agent has lost
// touch with the cluster for longer than a lease, even while the agent
// itself cannot run (a SIGSTOP, a VM pause, a swap storm).
//
// The agent renews a lease with the raft leader while it holds attempts
// and writes each renewal's deadline to a lease file (Write), with what
// to stop: the freezer of each attempt's cgroup and the process group of
// each process it started. A guard process, the agent's own executable
// started under the name Arg0 (StartGuard), reads the file every
// PollPeriod and, once the deadline has passed, freezes those cgroups and
// stops those process groups. The guard lives apart from the agent: it is
// in a session of its own, has no parent-death signal, and one guard per
// data directory (a lock file) serves every life of the agent, so an
// agent that restarts keeps the guard that watched its jobs.
//
//	agent                                 guard (Arg0 DIR)
//	renew with the leader ─► Write(DIR, Lease{Until, Freezers, Pgids})
//	                                      every PollPeriod: Read(DIR)
//	                                      Until passed ─► freeze, SIGSTOP
//	lease lapsed: kill the attempts the
//	leader may have retried, then
//	Write a new lease ──────────────────► Until ahead ─► thaw what it froze
//	graceful stop: Remove(DIR) ─────────► no file ─► exit
//
// Deadlines are CLOCK_BOOTTIME nanoseconds (Now): the clock every process
// of the machine shares, which keeps counting while the machine is
// suspended, so a suspended node's lease lapses as the leader's clock
// says it should.
//
// A process group is stopped by number, and the number is its leader's
// pid, which any process of the machine may take once the group is gone;
// the guard keeps enforcing a lapse for up to an hour. So Write records
// each group with its leader's start time, and the guard signals a group
// only while a pidfd of its leader shows that same process still leading
// it (group.go): a group whose leader has exited is dropped at the next
// poll, and what is left of it is the cgroup freezer's to stop.
//
// The agent lets an attempt the guard froze go on (the new lease thaws
// it) only once its state, caught up to the leader's at the renewal, shows
// the attempt was not failed; any other it kills first, because the
// leader may already have retried it elsewhere (agent/jobrun's fence.go).
package fence
