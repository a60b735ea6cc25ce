// Package topoexport turns the switches shoal knows (declared with
// --switch, or inferred from the bandwidth tests) and each node's measured
// link into the files other schedulers read: Slurm's topology.conf (the
// topology/tree and topology/block plugins), slurm.conf node weights, and
// Kubernetes node labels for topology-aware scheduling (Kueue TAS). A lab
// already on Slurm or Kubernetes can then use shoal as a network advisor.
//
// It is pure: nodes go in, text comes out.
//
//	t := topoexport.Build(nodes, topoexport.DefaultSlowRatio)
//	t.SlurmTree(os.Stdout)     // SwitchName=sw1 Nodes=n01,n02 ... SwitchName=root Switches=sw1,sw2
//	t.SlurmWeights(os.Stdout)  // NodeName=n03 Weight=500 for each node on a slow link
//	t.K8sLabels(os.Stdout)     // kubectl label node n01 topology.shoal.io/block=shoal ...
//
// # Slow links
//
// A node is on a slow link when its measured link is below SlowRatio times
// the median link of its switch's measured nodes (default one half): a bad
// cable, a port negotiated down, a NIC on a slower switch than the
// administrator believes. The topology files keep such a node on its switch
// (that is where it is cabled) and say it in a comment; the weights make
// Slurm take it last: Slurm prefers the lowest Weight, every other node
// keeps Slurm's default of 1, and a slow node gets 100 × its switch's
// median / its own link (a node at a fifth of its switch: 500), so of two
// slow nodes the slower is taken later still.
package topoexport
