// Package pairmodel derives a link for every pair of nodes from the
// network model's tables: each node's switch and link capacity, each
// switch pair's capacity and RTT class, and the pairs measured directly.
// It is the one implementation of that rule: netmodel builds the Tables
// (netmodel.Model.Tables), the leader hands them to placement as
// Snapshot.Model (placement.PairModel is this Tables), and placement
// derives the pairs as it reads them, without a name or a call per pair.
//
//	rows := t.Rows(n)
//	for i := range n {
//		r := rows.Row(i)
//		if !r.OK() {
//			continue
//		}
//		for j := i + 1; j < n; j++ {
//			if rtt, avail, peak, ok := r.Pair(j); ok {
//				// pair (i, j) is a link of these figures
//			}
//		}
//	}
//
// It is pure and imports nothing of shoal.
package pairmodel
