package probes

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
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
	rtt      probe.RTTWindow
	bw, peak float64
	bwAt     time.Time
	hasRTT   bool
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

func (r *netRow) addBW(peer string, at time.Time, mbps float64) {
	if peer == "" || mbps <= 0 || math.IsInf(mbps, 0) || math.IsNaN(mbps) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cell(peer)
	c.bw, c.bwAt = mbps, at
	c.peak = max(c.peak, mbps)
	r.dirty = true
}

// take returns the row as it is sent to the servers, and whether it changed since
// the last take. Values are rounded (RTT to the microsecond, bandwidth to
// 0.1 Mbit/s) so the encoding stays short. Peers gossip no longer knows
// are forgotten.
func (r *netRow) take(now time.Time, known func(string) bool) ([]gossip.NetEntry, bool) {
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
	out := make([]gossip.NetEntry, 0, len(r.cells))
	for p, c := range r.cells {
		e := gossip.NetEntry{Peer: p}
		if m1, m5, at, ok := c.rtt.Means(now); ok {
			e.RTT1 = math.Round(float64(m1) / float64(time.Microsecond))
			e.RTT5 = math.Round(float64(m5) / float64(time.Microsecond))
			e.RTTAt = at.UnixMilli()
		}
		if !c.bwAt.IsZero() {
			e.BW, e.Peak = math.Round(c.bw*10)/10, math.Round(c.peak*10)/10
			e.BWAt = c.bwAt.UnixMilli()
		}
		if e.RTTAt == 0 && e.BWAt == 0 {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out, true
}
