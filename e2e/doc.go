// Package e2e holds shoal's end-to-end tests: real agents, one per network
// namespace of the netns testbed, driven through the shoal CLI, with real
// MPI (MPICH, UCX_TLS=tcp) jobs. They need root, iproute2 and MPICH, and
// run only when SHOAL_E2E=1 (make e2e), so `go test ./...` skips them in
// a moment:
//
//	sudo SHOAL_E2E=1 go test -count=1 -v -timeout 15m ./e2e/
//
// The voters are the first three nodes of testdata/five.json (sw1), which
// the lab starts first; sw2's two nodes are the minority of a partition.
package e2e

// Jobs in these tests pass --force: every namespace shares the host's
// /proc/loadavg, so on a busy machine placement would see all five nodes
// overloaded and (rightly) recommend waiting. What is tested here is
// formation, launch and healing, not the overload rule.
