// Package watch holds a counter that readers can block on: the raft
// index the agent has applied, or the number of changes gossip has seen.
// A writer raises it; a reader takes its value with a channel that is
// closed at the next raise, so any number of readers wait on one change
// without polling and without the writer ever blocking.
//
//	var ix watch.Index
//	ix.Raise(fsm.Index())            // the writer, after each apply
//	v := ix.Wait(ctx, after)         // a blocking query: returns once v > after, or ctx ends
//
// The package is pure and imports nothing of shoal.
package watch
