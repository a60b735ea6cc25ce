// Package synth generates seeded synthetic clusters for the placement tests,
// benchmarks and the quality report: a few switches with uneven port rates,
// uneven node load, background traffic that eats into link bandwidth, and
// optionally sparse link measurements as a large cluster would have.
//
//	snap := synth.Cluster(synth.Config{Nodes: 16, Switches: 4, Seed: 7})
//	d, err := placement.Place(snap, placement.DefaultRequest(32))
package synth
