// Package child is the body of a probe process, `shoal probe KIND`, and
// the line protocol it speaks with the agent that started it. It imports
// nothing of the agent, so the probe binary's code path stays small; the
// agent runs the same Run in-process when it has no binary to exec.
//
// The protocol: JSON lines over the probe's stdin and stdout; the probe's
// stderr carries its log lines.
//
// agent → probe, on stdin:
//
//	{"type":"config","kind":"latency","key":"…","beat_ms":2000,…}  first line; again after a SIGHUP
//	{"type":"peers","peers":[{"name":"n2","addr":"10.0.0.2:7949"}]}  latency: whom to ping
//	{"type":"test","id":7,"peer":"n2","addr":"10.0.0.2:7949"}        bandwidth: one test now
//
// probe → agent, on stdout:
//
//	{"type":"beat"}                                            every beat_ms
//	{"type":"sample","sample":{…RawSample…}}                  nodestate
//	{"type":"rtt","rtts":[{"peer":"n2","us":183}]}             latency, once per round
//	{"type":"bw","id":7,"peer":"n2","bytes":2097152,"ns":…,"rev_bytes":…,"rev_ns":…,"carried":…,"rev_carried":…}  bandwidth result both ways (or "err")
//
// A config line after the first changes the probe's periods (beat_ms,
// sample_ms, latency_ms) and its test timeout (timeout_ms) in place; its
// key and CA are the first line's for the life of the process.
//
// The probe exits when its stdin closes (the agent went away); the agent
// starts probes with the parent-death signal set, so a crashed agent
// leaves no probes behind. The key authenticates the probe port; it
// travels on stdin, never in argv where other users could read it.
//
//	err := child.Run(ctx, "latency", os.Stdin, os.Stdout, nil, log)
package child
