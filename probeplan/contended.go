package probeplan

// BesideTraffic is one direction of a bandwidth test that ran while one
// of its ends carried other traffic the same way: that end's link was
// shared, and the reading may be the test's share of it rather than what
// the path offers. All rates are Mbit/s, as the busy end counted them.
type BesideTraffic struct {
	// Mbps is the test's reading.
	Mbps float64
	// Besides is what the busy end carried that way besides the test
	// while it ran.
	Besides float64
	// Now is what the busy end carries that way now: its latest traffic
	// sample.
	Now float64
	// Link is the most the busy end's link is known to carry that way:
	// the fastest of its tests, the traffic beside them included; 0 when
	// not known.
	Link float64
}

// fullShare: a test whose reading and the traffic beside it add up to at
// least this share of the busy end's Link ran on a full link there.
// retestGain: what that link has free now must be at least this many
// times the reading for a re-test to be worth it.
const (
	fullShare  = 0.8
	retestGain = 1.5
)

// RetestDue reports whether a test beside traffic is worth running again
// now: a re-test while the traffic goes on as it did reads the same
// share and spends the budget for nothing (lab12's flows run all along).
//
// It is, when the busy end has gone quiet: it carries under half of
// what it carried beside the test. It is too when the busy end's link
// was full during the test (reading plus traffic near Link: that link,
// not the path, held the test back) and what it has free now, Link less
// Now, is at least retestGain times the reading: a re-test would read
// clearly more of that link.
// A node that takes one job after another can stay above half of that
// traffic for a while, and meanwhile placement reads the test's share for
// the link (on the queue12 testbed n07-n08 read 26 of 100 Mbit/s while
// n08 received 74 besides, and stood through a minute of back-to-back
// jobs). A flow that runs on carries more once the test has stopped
// sharing its link, so it orders no re-test: its link has less free than
// the test read.
//
// A quiet end's own slow link is not what this tests: a test whose busy
// end's link was not full read what the path gave, and only the quiet
// condition re-tests it.
func (b BesideTraffic) RetestDue() bool {
	if b.Now < b.Besides/2 {
		return true
	}
	full := b.Link > 0 && b.Mbps+b.Besides >= fullShare*b.Link
	return full && b.Link-b.Now >= retestGain*b.Mbps
}

// outlierShare: a reading between two nodes of one switch under this
// share of what both nodes' other tests on that switch read at best is
// not left standing on one test (OutlierDue).
const outlierShare = 0.5

// OutlierDue reports whether a test between two nodes of one switch that
// ran with no other traffic at either end is worth running again: it
// read mbps, under outlierShare of the slower of aFast and bFast, the
// fastest each node's other tests on that switch read (0: none), and
// neither node's link checks read its link slower (slower). Such a
// reading is neither the link's (both ends' links read fast with their
// other peers) nor a job's share (no traffic beside it): on the queue12
// testbed n08->n05 read 41.6 of 100 Mbit/s in the first cycle, with both
// ends counting nothing besides the test on a host at load 7, and stood
// until the next full cycle, five minutes on, while netload left sw2
// out. A node whose link truly dropped reads slow with every peer once
// re-tested, and its link checks say so first, so the rule does not
// lift it.
func OutlierDue(mbps, aFast, bFast float64, slower bool) bool {
	fast := min(aFast, bFast)
	return !slower && mbps > 0 && fast > 0 && mbps < outlierShare*fast
}
