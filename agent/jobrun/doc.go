// Package jobrun is the node side of jobs: what one agent does so that the
// job processes on its node match the replicated state. The leader decides
// where an attempt runs and commits it to raft; every node then runs the
// loop below on its own copy of the state.
//
//	replicated state (raftfsm) ──► Node.Run, level-triggered, keyed by (job, attempt)
//	  launching, holds this node ──► reserve: fence the attempt, propose ack_reservation
//	  running, this node heads it ──► runLauncher: BuildLaunch ► MPI launcher or copies
//	                                  ► logs on disk ► propose finish_attempt / fail_attempt
//	  running, asked to resize    ──► signalResize: SIGUSR1 to the ranks that catch it
//	  no longer live              ──► kill the process groups, then the attempt's cgroup
//	                                  (every process, however it escaped), record its usage
//	                                  (record_usage), sweep /proc for stray ranks, remove
//	                                  Open MPI session dirs, prune bookkeeping
//
// The files are named for what they hold: reconcile.go (the loop), launch.go
// (the head's launcher and the outcome it commits), argv.go (BuildLaunch: the
// pure mapping from a job spec, an attempt, a flavour and paths to the
// command lines of MPICH's Hydra, Open MPI's mpirun or plain copies),
// exec.go (job processes: the owner's credentials, the environment, the job
// helper, streaming and exit status), procs.go (the processes per attempt
// and the fence that keeps an older attempt from running after a newer one),
// cgroups.go (one cgroup per attempt on the node: made before the
// attempt's first process here, joined by the job helper before it executes
// anything, with the job's --mem and a CPU quota of --cpus-per-rank × its
// ranks here; an OOM kill committed at once; usage recorded and the cgroup
// removed at the attempt's end), warm.go (the job helpers of an
// attempt's first processes here, started in its cgroup once the node's
// reservation is committed, waiting for their commands), sweep.go (the SHOAL_PROC marker and the
// /proc sweep, the second net and the only one on a node without cgroups),
// life.go (a restarted
// agent first fails the attempts of its last life), steps.go (a batch
// script's MPI launches as job steps: launcher shims, the owner's step
// socket, record_step), ompi.go, rshwrapper.go,
// joblimits.go, elastic_signal.go, checkpoint.go, logs.go and prune.go.
//
// The agent builds one Node when raft has started and runs it until it stops:
//
//	n, err := jobrun.New(jobrun.Config{Name: ..., DataDir: ..., LocalAddr: ...},
//		jobrun.Deps{Log: log, Now: time.Now, State: fsm, Applied: applied, Propose: a.Apply, ...})
//	go n.Run(ctx) // returns once ctx ends and the node's job processes are killed
//
// Deps are small functions and interfaces (read the state, propose a raft
// command, reach a peer, the job capability, whether this node may run a
// user's job), never the agent itself; time is read from Deps.Now. The HTTP
// side calls the exported methods: WaitRunnable, Fence, OMPISessionEnv,
// Command and RunStreaming serve POST /v1/exec (`shoal rsh` and plain
// copies), AttemptDir and AttemptEnded serve job logs, Boot the health check.
package jobrun
