package probes

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
)

// netRow is this node's row of the network matrix: per peer the RTT
// window and the latest and peak bandwidth. Measurements arrive from the
// probe processes and the probe server; take hands the row to Deps.PublishRow.
type netRow struct {
	mu    sync.Mutex
	cells map[string]*netCell
	dirty bool
}

type netCell struct {
	rtt    probe.RTTWindow
	out    netDir // this node to the peer
	in     netDir // the peer to this node
	hasRTT bool
}

// netDir is one direction of a link: the latest rate, what this node's
// link carried that way during that test (0: not known), the fastest
// rate seen and when the latest was measured.
type netDir struct {
	bw, carried, peak float64
	at                time.Time
}

// dirReading is one direction of one test: its rate and what this
// node's link carried that way meanwhile, the test included
// (probe.BandwidthResult.Carried; 0 when not read), in Mbit/s.
type dirReading struct {
	mbps, carried float64
}

func validRate(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

func (d *netDir) add(at time.Time, r dirReading) {
	if !validRate(r.mbps) {
		return
	}
	d.bw, d.at = r.mbps, at
	d.carried = 0
	if validRate(r.carried) && r.carried >= r.mbps {
		d.carried = r.carried
	}
	d.peak = max(d.peak, r.mbps)
}

func newNetRow() *netRow { return &netRow{cells: map[string]*netCell{}} }

func (r *netRow) cell(peer string) *netCell {
	c, ok := r.cells[peer]
	if !ok {
		c = &netCell{}
		r.cells[peer] = c
	}
	return c
}

func (r *netRow) addRTT(peer string, at time.Time, rtt time.Duration) {
	if peer == "" || rtt <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cell(peer)
	c.rtt.Add(at, rtt)
	c.hasRTT, r.dirty = true, true
}

// addBW records one bandwidth test with peer: out is the direction from
// this node to the peer, in the one back; a direction the test did not
// measure (rate 0, or not a finite positive rate) keeps its last value.
func (r *netRow) addBW(peer string, at time.Time, out, in dirReading) {
	if peer == "" || (!validRate(out.mbps) && !validRate(in.mbps)) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cell(peer)
	c.out.add(at, out)
	c.in.add(at, in)
	r.dirty = true
}

// latest is the pair's latest test with peer each way, Mbit/s (0: that
// way never tested).
func (r *netRow) latest(peer string) (out, in float64) {
	out, in, _ = r.latestTest(peer)
	return out, in
}

// latestTest is latest and when those figures were measured: the older
// of the two ways' latest tests (a way never tested counts no time;
// zero when neither was).
func (r *netRow) latestTest(peer string) (out, in float64, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cells[peer]
	if !ok {
		return 0, 0, time.Time{}
	}
	at = c.out.at
	if at.IsZero() || (!c.in.at.IsZero() && c.in.at.Before(at)) {
		at = c.in.at
	}
	return c.out.bw, c.in.bw, at
}

// take returns the row as it is sent to the servers, and whether it changed since
// the last take. Values are rounded (RTT to the microsecond, bandwidth to
// 0.1 Mbit/s) so the encoding stays short. Peers gossip no longer knows
// are forgotten.
func (r *netRow) take(now time.Time, known func(string) bool) ([]nodestate.NetEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.cells {
		if !known(p) {
			delete(r.cells, p)
			r.dirty = true
		}
	}
	if !r.dirty {
		return nil, false
	}
	r.dirty = false
	out := make([]nodestate.NetEntry, 0, len(r.cells))
	for p, c := range r.cells {
		e := nodestate.NetEntry{Peer: p}
		if m1, m5, at, ok := c.rtt.Means(now); ok {
			e.RTT1us = math.Round(float64(m1) / float64(time.Microsecond))
			e.RTT5us = math.Round(float64(m5) / float64(time.Microsecond))
			e.RTTAt = at.UnixMilli()
		}
		fillBW(&e, c)
		if e.RTTAt == 0 && e.BWAt == 0 {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out, true
}

// fillBW writes both directions of c into e, and the undirected fields
// as the worse direction (BW: the min of the latest rates measured) and
// the faster peak, so readers of BW alone never see a link as better
// than its worse direction.
func fillBW(e *nodestate.NetEntry, c *netCell) {
	round := func(v float64) float64 { return math.Round(v*10) / 10 }
	if !c.out.at.IsZero() {
		e.OutMbps, e.PeakOutMbps, e.OutAt, e.CarriedOutMbps = round(c.out.bw), round(c.out.peak), c.out.at.UnixMilli(), round(c.out.carried)
	}
	if !c.in.at.IsZero() {
		e.InMbps, e.PeakInMbps, e.InAt, e.CarriedInMbps = round(c.in.bw), round(c.in.peak), c.in.at.UnixMilli(), round(c.in.carried)
	}
	switch {
	case e.OutAt != 0 && e.InAt != 0:
		e.AvailMbps, e.PeakMbps, e.BWAt = min(e.OutMbps, e.InMbps), max(e.PeakOutMbps, e.PeakInMbps), max(e.OutAt, e.InAt)
	case e.OutAt != 0:
		e.AvailMbps, e.PeakMbps, e.BWAt = e.OutMbps, e.PeakOutMbps, e.OutAt
	case e.InAt != 0:
		e.AvailMbps, e.PeakMbps, e.BWAt = e.InMbps, e.PeakInMbps, e.InAt
	}
}
