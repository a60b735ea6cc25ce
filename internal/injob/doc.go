// Package injob is what a process inside a shoal job uses to reach its
// node's agent: the attempt's capability (Capability), a client of the
// agent that authenticates with it (Agent), and the remote shell MPI
// launchers run instead of ssh (Rsh).
//
// It imports only the standard library and the agent's API types, so that
// the small job-start binary (cmd/shoal-exec), which MPI launchers start
// once per remote host, links little more than net/http:
//
//	code, msg := injob.Rsh(ctx, os.Args[2:], os.Stdout, os.Stderr)
//	if msg != "" {
//		fmt.Fprintln(os.Stderr, "shoal: "+termsafe.Safe(msg))
//	}
//	os.Exit(code)
package injob
