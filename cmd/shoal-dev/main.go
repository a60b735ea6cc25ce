// Command shoal-dev runs local clusters and whole-cluster benchmarks for
// shoal's developers and its demo.
//
//	shoal-dev up -n 4 -dir .demo          # 4 agent processes on loopback, detached
//	shoal-dev down -dir .demo             # stop them
//	shoal-dev bench-gossip                # state propagation, 5/20/50 agents
//	shoal-dev bench-idle                  # an idle agent's CPU and memory
//	shoal-dev bench-failover -runs 10     # leader failover and voter replacement
//	shoal-dev bench-launch                # submit → ranks started, shoal vs mpiexec, and where the time goes
//	shoal-dev bench-array -tasks 1000     # an array of /bin/true, submit → last task's end
//	shoal-dev vivaldi-error               # network coordinates vs direct pings on the netns testbed
//	shoal-dev bench-scale -n 100,300,1000 # in-process agents: gossip, raft servers, client replicas, jobs; growth of each figure
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmds := map[string]func([]string) error{
		"up": cmdUp, "down": cmdDown,
		"bench-gossip": cmdBenchGossip, "bench-idle": cmdBenchIdle, "bench-failover": cmdBenchFailover,
		"bench-launch": cmdBenchLaunch, "bench-array": cmdBenchArray, "bench-scale": cmdBenchScale, "vivaldi-error": cmdVivaldiError,
	}
	fn, ok := cmds[os.Args[1]]
	if !ok {
		usage()
	}
	if err := fn(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "shoal-dev:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: shoal-dev up|down|bench-gossip|bench-idle|bench-failover|bench-launch|bench-array|bench-scale|vivaldi-error [flags] (each takes -h)")
	os.Exit(2)
}
