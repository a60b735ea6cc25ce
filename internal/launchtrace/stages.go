package launchtrace

// Stage names one instant of a launch. The order of Stages is the order
// in which they happen for a job that starts at once.
type Stage string

// The stages, in launch order. A stage that happens on several nodes
// (acknowledgement, a remote start) is taken at its latest.
const (
	// SubmitReceived: the agent the client talks to has the submit request.
	SubmitReceived Stage = "submit_received"
	// SubmitCommitted: raft committed submit_job and that agent applied it.
	SubmitCommitted Stage = "submit_committed"
	// RoundStart: the leader began the scheduling round that placed the job.
	RoundStart Stage = "round_start"
	// Placed: the leader's placement decided the job's hosts.
	Placed Stage = "placed"
	// PlaceCommitted: raft committed the job's place_job.
	PlaceCommitted Stage = "place_committed"
	// PlacementSeen: a host of the allocation applied place_job.
	PlacementSeen Stage = "placement_seen"
	// AckCommitted: raft committed a host's reservation.
	AckCommitted Stage = "ack_committed"
	// StartCommitted: raft committed start_job (the co-allocation barrier
	// is released).
	StartCommitted Stage = "start_committed"
	// LauncherBegin: the head node applied start_job and began its launcher.
	LauncherBegin Stage = "launcher_begin"
	// CgroupReady: the attempt's cgroups exist on a node.
	CgroupReady Stage = "cgroup_ready"
	// HelperStarted: the job helper of a process was started (the launcher
	// on the head, a remote command on another node).
	HelperStarted Stage = "helper_started"
	// ExecReceived: a node's agent received a remote command of the
	// attempt (shoal rsh, or a copy of a --mpi none job).
	ExecReceived Stage = "exec_received"
	// Exited: the head's launcher (the MPI launcher, or every copy of a
	// --mpi none job) exited.
	Exited Stage = "exited"
	// OutcomeCommitted: raft committed the attempt's outcome
	// (finish_attempt or fail_attempt), proposed by the head.
	OutcomeCommitted Stage = "outcome_committed"
	// CgroupRemoved: a node killed and removed the attempt's cgroups
	// after the attempt ended there.
	CgroupRemoved Stage = "cgroup_removed"
)

// Stages lists every stage in launch order.
var Stages = []Stage{SubmitReceived, SubmitCommitted, RoundStart, Placed, PlaceCommitted, PlacementSeen,
	AckCommitted, StartCommitted, LauncherBegin, CgroupReady, ExecReceived, HelperStarted, Exited,
	OutcomeCommitted, CgroupRemoved}
