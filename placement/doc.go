// Package placement decides where an MPI job runs: a pure function of a
// snapshot of the cluster (nodes with their Table-1 attributes, liveness, PEs
// and held slots; links with latency and bandwidth, and optionally a network
// model's tables from which the links of the unmeasured pairs are derived as
// they are read, Snapshot.Model) and a request. It does no I/O, reads no
// clock, and draws randomness only from the request's seed.
//
// Usage:
//
//	d, err := placement.Place(snap, placement.Request{N: 16, PPN: 4, Oversubscribe: true})
//	if err != nil {
//		return fmt.Errorf("place: %w", err) // invalid input
//	}
//	if d.Wait {
//		fmt.Println("wait:", d.WaitReason)
//		return nil
//	}
//	hf, _ := placement.FormatHostfile(d, "mpich") // "node03:4\nnode07:4\n..."
//
// The model follows seed 002 §3 (Kumar, Jain, Malakar):
//
//   - CL_v (Eq. 1): every Table-1 attribute divided by its sum over the
//     eligible nodes, maximisation attributes complemented against the largest
//     normalised value, SAW-weighted (DefaultAttrWeights).
//   - NL_(u,v) (Eq. 2): w_lt*LT + w_bw*B. The paper policy keeps Eq. 2: B
//     the complement peak-avail, each term divided by its sum over the
//     measured pairs. T and netload take LT over the median measured RTT and
//     B = top/max(avail, top/10) - 1, the extra time a byte takes against the
//     fastest link, neither divided by a sum. Repeats of a pair are averaged
//     per direction; netload's avail is the worse direction, each the min of
//     its latest test and what the sender can send and the receiver receive
//     now (Node.NetTxBytesPerSec, NetRxBytesPerSec; direction.go), paper's
//     the mean of the two. An unmeasured pair is never a perfect link: it
//     costs the worst measured pair between the same two switches, else the
//     worst measured pair.
//   - pc_v (Eq. 3): logical cores - ceil(1-min load) % logical cores for the
//     paper policy, logical cores - ceil(load) (never below 0) for the others;
//     less HeldSlots; PPN overrides; PE needs cap it.
//   - T (Eq. 4): alpha*C_norm + beta*N_norm. Breakdown.T normalises by the
//     costs of an average group of the needed size (C: the mean node; N: the
//     median measured pair), so it compares policies; Breakdown.PaperT is
//     Eq. 4 over the paper's own candidates.
//
// Policies: "paper" (Alg. 1 and 2 verbatim), "netload" (the default: whole-group
// scoring, local search, bounded pool), and the baselines "random", "sequential"
// and "load". GERBIL's relaxation modes (seed 000, Table II) decide what a
// hostfile fixes: "none" (hosts and counts), "loc" (counts), "dist" (hosts),
// "loc+dist" (node count), "all" (nothing). Each node is one launch unit. More
// processes than free slots is Degraded when Oversubscribe is on, Wait when off.
// netload, paper and the oracle list their hosts, and so the ranks, switch by
// switch, the switches chained by nearness (rankorder.go); a kept hostfile keeps
// its order.
// When every candidate is above LoadThreshold the answer is Wait (seed 002 §6)
// unless Force. Oracle searches exhaustively on small clusters. NextJob is the
// queue order with seed 001's HPE rule. docs/design/placement.md has the measurements.
package placement
