// Package deadline bounds a benchmark's whole run. A benchmark bounds
// its own waits, and -deadline bounds the run besides, so a wait nobody
// bounded (a retry loop without a context, a peer that never answers)
// stops the run with the stacks of what was waiting instead of leaving it
// printing nothing:
//
//	fs := flag.NewFlagSet("bench-gossip", flag.ExitOnError)
//	limit := deadline.Flag(fs, 20*time.Minute)
//	fs.Parse(args)
//	defer deadline.Start("bench-gossip", *limit)()
//	// ... measure, print the table
package deadline
