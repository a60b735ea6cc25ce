// Package connlimit caps how many connections strangers can hold open on
// a server before they authenticate: in all and per source address.
//
// Slots is the accounting alone (no I/O), shared by gossip's stream guard,
// the probe server and the HTTP API's listeners; Listener applies it to a
// net.Listener by closing every connection over a cap as it is accepted,
// so an attacker's connections never queue in front of a member's.
//
//	ln = connlimit.NewListener(ln, connlimit.NewSlots(1024, 64), connlimit.SourceIP)
//	srv.Serve(ln)
package connlimit
