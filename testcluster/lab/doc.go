// Package lab runs a shoal cluster on the network-namespace testbed
// (package netns): one `shoal agent` per emulated node, each bound to its
// node's address, plus helpers that talk to the cluster through the shoal
// CLI run inside a node (the host has no route into the testbed).
//
// # Use in a test
//
//	topo, _ := netns.LoadTopology("../testbed/lab12.json")
//	l := lab.UpForTest(t, topo, lab.Options{Shoal: testcluster.BuildShoal(t)})
//	if err := l.WaitFormed(ctx, time.Minute); err != nil { t.Fatal(err) }
//	leader, _ := l.Leader(ctx, "n02")
//	out, err := l.Shoal(ctx, "n03", "run", "-n", "2", "--", "./ring")
//	l.KillAgent(leader) // SIGKILL
//
// Outside tests call [Up] and defer [Lab.Close]; Close stops the agents and
// tears the testbed down (netns guarantees nothing is left behind).
//
// # What the testbed cannot show, and how the lab makes up for it
//
// All namespaces share the host's CPUs and /proc/loadavg, so a CPU hog on
// one emulated node neither shows in that node's load nor slows only that
// node. Two opt-in emulations close the gap:
//
//   - [Options.EmulateLoad] gives every agent its own HOST_PROC directory
//     (read by gopsutil): links to the real /proc except for loadavg, which
//     holds the node's hog count. Everything else (CPU times, memory,
//     network counters of the node's own namespace) is real.
//   - [Options.ConfineHogs] moves each hog node's hogs into a cgroup (v1 cpu
//     controller) of its own with a CPU quota, at nice 0, and the launcher
//     script ([Lab.LauncherScript]) puts MPI ranks started on that node into
//     the same cgroup: a rank on a loaded node really runs slower, and hogs
//     do not slow the other nodes.
package lab
