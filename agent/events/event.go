package events

// Topics of the stream.
const (
	TopicJob     = "job"
	TopicAttempt = "attempt"
	TopicNode    = "node"
	TopicProbe   = "probe"
)

// Topics lists every topic, in the order a reset names them.
var Topics = []string{TopicJob, TopicAttempt, TopicNode, TopicProbe}

// TypeReset is the type of the event a stream gets when events it asked
// for are gone from the ring: re-read the topic's state.
const TypeReset = "reset"

// Event is one thing that happened.
type Event struct {
	// Index is the raft index of the state the event was seen in.
	Index uint64
	// Topic is job, attempt, node or probe; Type what happened (submitted,
	// placed, started, ended, cancelled, alive, suspect, dead, ...).
	Topic, Type string
	// Key names the subject: a job ID, JOB/ATTEMPT, a node name or
	// NODE/KIND for a probe.
	Key string
	// Payload is the subject as its read answers it (api.Job, api.Attempt,
	// api.Node, api.ProbeInfo), shared by every stream: never modify it.
	Payload any
	// Owner is the owner of a job or attempt's job, for the stream to
	// decide what a caller may see of it.
	Owner string
}

// gossiped says whether the topic comes from gossip, whose events share
// the index of the last raft entry (see the package doc).
func gossiped(topic string) bool { return topic == TopicNode || topic == TopicProbe }
