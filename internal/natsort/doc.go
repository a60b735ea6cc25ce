// Package natsort orders strings naturally: runs of decimal digits compare
// by their value, so node n2 comes before n10 and rack9-n3 before
// rack10-n1, as people number their machines.
//
//	names := []string{"n10", "n2", "n1"}
//	natsort.Sort(names) // n1 n2 n10
//	slices.SortFunc(nodes, func(a, b api.Node) int { return natsort.Compare(a.Name, b.Name) })
//
// The order is total: names that differ only in leading zeros ("n01",
// "n1") are equal by value and then ordered as plain strings, so sorting
// never depends on the input's order. The package is pure and imports
// nothing of shoal.
package natsort
