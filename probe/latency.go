package probe

import (
	"crypto/rand"
	"slices"
	"time"
)

var randRead = rand.Read

// RTTWindow keeps one peer's round-trip samples of the last five minutes
// and gives their 1- and 5-minute means (seed 002 §4: "we maintain the
// average of the last 1 and 5 minutes of P2P latency"). It is pure: time
// comes in with the samples and the query.
type RTTWindow struct {
	pts []rttPoint
}

type rttPoint struct {
	at  time.Time
	rtt time.Duration
}

// maxRTTPoints bounds a window even if samples come far faster than the
// latency interval intends (one every second for five minutes).
const maxRTTPoints = 300

// Add records one sample taken at at. Samples older than five minutes
// before at are dropped.
func (w *RTTWindow) Add(at time.Time, rtt time.Duration) {
	w.pts = append(w.pts, rttPoint{at: at, rtt: rtt})
	drop := 0
	for drop < len(w.pts) && at.Sub(w.pts[drop].at) > window5 {
		drop++
	}
	if over := len(w.pts) - maxRTTPoints; over > drop {
		drop = over
	}
	if drop > 0 {
		w.pts = w.pts[:copy(w.pts, w.pts[drop:])]
	}
}

// Means returns the mean of the samples taken within the last minute and
// the last five minutes before now, and when the latest was taken. With a
// latency interval of a minute the 1-minute window may hold no sample:
// it then reports the latest one. ok is false when the window holds no
// sample of the last five minutes.
func (w *RTTWindow) Means(now time.Time) (m1, m5 time.Duration, latest time.Time, ok bool) {
	var s1, s5 time.Duration
	var n1, n5 int
	for _, p := range w.pts {
		age := now.Sub(p.at)
		if age > window5 {
			continue
		}
		s5 += p.rtt
		n5++
		if age <= window1 {
			s1 += p.rtt
			n1++
		}
		latest = p.at
	}
	if n5 == 0 {
		return 0, 0, time.Time{}, false
	}
	m5 = s5 / time.Duration(n5)
	if n1 > 0 {
		m1 = s1 / time.Duration(n1)
	} else {
		m1 = w.pts[len(w.pts)-1].rtt
	}
	return m1, m5, latest, true
}

// MedianRTT is the median of one burst of pings, robust to one delayed
// answer; 0 for none.
func MedianRTT(rtts []time.Duration) time.Duration {
	if len(rtts) == 0 {
		return 0
	}
	s := slices.Clone(rtts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
