package leader

import (
	"math"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// What shoal's own attempts leave behind once they have ended.
//
// While an attempt runs, placement counts it exactly: raft holds its slots
// (HeldSlots). Once it has ended its slots are free, but what its
// processes did still stands in the node's gossiped figures: the kernel's
// 1-minute load average decays for minutes after the processes have gone,
// and the latest traffic sample, taken while the ranks still talked, reads
// their transfers as load on the node's link. Both held a node that had
// just been freed against the next job, which went elsewhere. The leader
// knows when and where its attempts ran, so it takes them out.

// loadAvgTau is the time constant of the kernel's 1-minute load average,
// an exponential moving average of the runnable tasks.
const loadAvgTau = time.Minute

// endedHorizon is how long after an attempt ended its remains are worth
// looking for: e^-10, under 0.005 of a process, is left of its load.
const endedHorizon = 10 * loadAvgTau

// withoutEnded takes out of snap's nodes what shoal's attempts that have
// ended added to them: from the latest load, the share of the attempt's
// processes the kernel's load average still holds at now; from the
// latest traffic, when the window the sample's rates cover overlaps such
// an attempt's run, the node's traffic before the attempt started (if
// lower). A sample whose window began once the attempt had ended (an
// early sample a traffic shift called for reads a fifth of a second) is
// the node's own, kept whole, though earlier samples held the attempt.
func withoutEnded(snap *placement.Snapshot, st *raftfsm.State, nodes []Node, now time.Time) {
	ghost := map[string]float64{}
	ended := map[string][]span{}
	// liveSince is, per node, the start of the latest attempt still live
	// there: traffic before an ended attempt is not what the node carries
	// once another attempt has started since.
	liveSince := map[string]int64{}
	for _, j := range st.Jobs {
		for i := range j.Attempts {
			a := &j.Attempts[i]
			if !a.Ended() {
				if !a.StartedAt.IsZero() {
					for _, h := range a.Hosts {
						liveSince[h.Node] = max(liveSince[h.Node], a.StartedAt.UnixMilli())
					}
				}
				continue
			}
			if a.StartedAt.IsZero() || a.EndedAt.IsZero() || now.Sub(a.EndedAt) > endedHorizon {
				continue
			}
			ran := a.EndedAt.Sub(a.StartedAt)
			left := loadLeft(ran, now.Sub(a.EndedAt))
			for _, h := range a.Hosts {
				ghost[h.Node] += busyCores(a, h, j.Spec.CPUs(), ran) * left
				ended[h.Node] = append(ended[h.Node], span{a.StartedAt.UnixMilli(), a.EndedAt.UnixMilli()})
			}
		}
	}
	if len(ended) == 0 {
		return
	}
	byName := make(map[string]*Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if g := ghost[n.Name]; g > 0 {
			n.Load.Now = max(0, n.Load.Now-g)
		}
		nd := byName[n.Name]
		if nd == nil {
			continue
		}
		w, ok := latestWindow(nd)
		if !ok {
			continue
		}
		for _, s := range ended[n.Name] {
			if liveSince[n.Name] > s.start || w.start >= s.end || w.end <= s.start {
				continue
			}
			if rx, tx, ok := trafficBefore(nd.Traffic, s); ok {
				n.NetRxBytesPerSec, n.NetTxBytesPerSec = min(n.NetRxBytesPerSec, rx), min(n.NetTxBytesPerSec, tx)
			}
		}
	}
}

// busyCores is how many cores an ended attempt kept busy on host h on
// average: its recorded CPU time over the time it ran, at most what its
// ranks could use (procs times CPUs per rank). Until the node has
// recorded its usage (record_usage follows the end by a moment) it is
// that most: MPI ranks poll while they wait, and a job placed right after
// the end is the case this serves.
func busyCores(a *raftfsm.Attempt, h raftfsm.Host, cpus int, ran time.Duration) float64 {
	most := float64(h.NP * cpus)
	for _, u := range a.Usage {
		if u.Node == h.Node && ran > 0 {
			return min(most, u.CPUSeconds/ran.Seconds())
		}
	}
	return most
}

// span is a stretch of time, Unix milliseconds: an attempt's run, the
// window a traffic sample covers.
type span struct{ start, end int64 }

// loadLeft is how much of one process that ran for ran the 1-minute load
// average still holds since after it ended: it rose as 1-e^(-ran/tau)
// and decays as e^(-since/tau).
func loadLeft(ran, since time.Duration) float64 {
	if ran <= 0 {
		return 0
	}
	rise := 1 - math.Exp(-ran.Seconds()/loadAvgTau.Seconds())
	return rise * math.Exp(-max(since, 0).Seconds()/loadAvgTau.Seconds())
}

// latestWindow is the window the node's latest traffic rates cover,
// Unix milliseconds on its clock: as the node says (NetWindowMs, ending
// at SampledAt), or, from an agent that does not say, from the traffic
// point before its latest one to that latest one, the sample interval
// it is taken to cover. ok false when neither is known. The attempts'
// times are the leader's clock: a skew between the two moves the
// window's edges by as much, which matters only for a window within
// that skew of an attempt's start or end.
func latestWindow(nd *Node) (w span, ok bool) {
	if nd.NetWindowMs > 0 && nd.SampledAt > 0 {
		return span{nd.SampledAt - nd.NetWindowMs, nd.SampledAt}, true
	}
	if pts := nd.Traffic; len(pts) >= 2 {
		return span{pts[len(pts)-2].At, pts[len(pts)-1].At}, true
	}
	return span{}, false
}

// trafficBefore is the node's traffic before the attempt s started: its
// traffic point at or before s's start; ok false when none is known.
func trafficBefore(pts []nodestate.TrafficPoint, s span) (rx, tx float64, ok bool) {
	for k := len(pts) - 1; k >= 0; k-- {
		if pts[k].At <= s.start {
			return pts[k].Rx, pts[k].Tx, true
		}
	}
	return 0, 0, false
}
