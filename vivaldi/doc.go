// Package vivaldi is where shoal's network coordinate meets serf's: it
// converts the coordinate a node gossips (nodestate.Coord, distances in
// microseconds) to and from hashicorp/serf's coordinate.Coordinate
// (seconds), and estimates the round trip two coordinates predict.
//
// gossip updates its node's coordinate with serf's client and publishes
// it; the leader and the API estimate the round trips of pairs without a
// direct ping. Each reads the other's form here, so the units are
// converted in one place. nodestate stays free of serf (it imports the
// standard library alone); this package imports nodestate and serf's
// coordinate maths, nothing that does I/O.
package vivaldi
