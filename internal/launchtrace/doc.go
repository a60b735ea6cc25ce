// Package launchtrace names the stages of a job's launch and logs each as
// one debug line, so that a benchmark can tell where the time from submit
// to running ranks goes without a tracer of its own in the agent:
//
//	launchtrace.Mark(ctx, log, launchtrace.PlaceCommitted, job, attempt, time.Now())
//
// A line is logged at debug level with the message Msg and the attributes
// stage, job, attempt and at (the instant, RFC 3339 with nanoseconds:
// the log line's own time is when it was written, which may be later).
// Parse reads the lines back from an agent's JSON log (--log-json). An
// agent at info level pays one level check per stage.
package launchtrace
