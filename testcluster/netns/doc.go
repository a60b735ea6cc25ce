// Package netns builds a small real cluster on one Linux machine for tests
// and experiments: one network namespace per node, veth pairs into Linux
// bridges (one bridge per switch, joined by veth uplinks), every link rate
// set with tc tbf in both directions, optional background iperf3 flows and
// CPU hogs. It needs root and iproute2; tests skip with one line otherwise.
//
// # Layout
//
// Everything belongs to one instance prefix, [Family] plus two hex digits
// (e.g. "snt1a"), whose digits are also the third octet of the instance's
// subnet (0x1a: 10.213.26.0/24; see [Testbed.Subnet]):
//
//	snt1a_fab            fabric namespace: bridges snt1as0.., node ports snt1an0..,
//	                     uplinks snt1au0a/snt1au0b..
//	snt1a-NODE           one namespace per node: lo and eth0 (10.213.26.i/24),
//	                     no default route
//	/etc/netns/snt1a-*   the per-node hosts files (also used by ip netns exec)
//	/run/shoal-netns/snt1a  owner file (pid and start time of the owning process)
//	/run/shoal-netns/ns/snt1a-NODE.{mnt,uts}  the node's mount and UTS namespaces
//
// Nothing is created in the host's namespace, and no namespace has a route
// outside its /24, so no traffic ever leaves the testbed. Netem is not
// available on the CI kernel; delay cannot be emulated, only rates.
//
// # Use in a test
//
//	topo, err := netns.LoadTopology("../testbed/lab12.json")
//	...
//	tb := netns.UpForTest(t, topo, netns.Options{}) // skips unless root; Close in t.Cleanup
//	ip, _ := tb.Node("n02")
//	out, err := tb.Run(ctx, "n01", "ping", "-c", "1", ip.String())
//	agent, err := tb.Start(ctx, "n01", []string{"shoal", "agent", "--bind", ip.String()}, nil)
//	err = tb.WaitListening(ctx, "n01", 7946, 10*time.Second)
//	err = tb.SetUplink(ctx, "sw1", "sw2", false) // partition
//
// Outside tests call [Up] and defer [Testbed.Close]. Every node has a
// network namespace and persistent mount and UTS namespaces (bound to files
// under /run/shoal-netns/ns) in which the hostname is the node's name,
// /etc/hosts names every node and /sys shows the node's interfaces. Every
// command run on a node ([Testbed.Command], [Testbed.Run], [Testbed.Start])
// enters them:
//
//	nsenter --net=/run/netns/snt1a-NODE --mount=... --uts=... --wd=. -- argv...
//
// so it sees the node's hostname (MPI tells nodes apart by hostname), keeps
// argv's pid and the caller's working directory, and carries [MarkerEnv] and
// [NodeEnv] in its environment. (Creating a mount namespace per command, as
// `ip netns exec` does, stalled commands for seconds on a busy host.)
// For MPI ranks set UCX_TLS=tcp (MPICH ch4:ucx otherwise uses shared memory
// across namespaces and bypasses the shaped links); every node's interface
// is called eth0, so `-iface eth0` works on all of them.
//
// # Teardown
//
// Close stops the processes it started (SIGTERM to the process group, then
// SIGKILL), kills anything else still in its namespaces or carrying its
// marker, and deletes the namespaces, which removes the veths, bridges and
// qdiscs in them. A SIGINT, SIGTERM or SIGHUP to the process closes every
// live testbed before the process dies. After a SIGKILL, the next [Up] on
// the machine sweeps the dead owner's leftovers ([SweepStale]); [Sweep]
// removes leftovers by prefix (Sweep(Family) removes every testbed, live or
// not). By hand:
//
//	for ns in $(ip netns list | awk '/^snt/ {print $1}'); do ip netns pids $ns | xargs -r kill -9; ip netns del $ns; done
//	umount /run/shoal-netns/ns/snt*; rm -rf /run/shoal-netns/ns/snt* /run/shoal-netns/snt* /etc/netns/snt*
//
// # Limits
//
// All nodes share the host's CPUs, memory, /dev/shm and load average: a CPU
// hog slows every node a little and shows in every node's /proc/loadavg.
// At most 256 testbeds run at once and [MaxNodes] nodes each.
package netns
