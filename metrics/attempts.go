package metrics

import (
	"sync"
	"time"
)

// Attempt is what the job histograms need of one attempt of a job, as the
// replicated state records it.
type Attempt struct {
	Job     uint64
	Attempt int
	// Waited is when the attempt started to wait for placement: the job's
	// submission for attempt 1.
	Waited  time.Time
	Placed  time.Time
	Started time.Time // zero until every rank runs
}

// attemptSeen records which of an attempt's durations were observed.
type attemptSeen struct{ placed, started bool }

type attemptKey struct {
	job     uint64
	attempt int
}

// attempts remembers observed attempts, so that the agent can hand
// ObserveAttempts the whole job table on every tick.
type attempts struct {
	mu   sync.Mutex
	seen map[attemptKey]attemptSeen
}

// ObserveAttempts feeds QueueWait (placed - waited) and Launch (started -
// placed) once per attempt from the attempts in the cluster's state; call
// it with all of them, as often as convenient. Attempts placed or started
// before the first call (an agent restarted into an old cluster) are
// observed too; ones no longer listed (purged) are forgotten.
func (m *Metrics) ObserveAttempts(list []Attempt) {
	m.att.mu.Lock()
	defer m.att.mu.Unlock()
	if m.att.seen == nil {
		m.att.seen = map[attemptKey]attemptSeen{}
	}
	live := make(map[attemptKey]bool, len(list))
	for _, a := range list {
		k := attemptKey{a.Job, a.Attempt}
		live[k] = true
		s := m.att.seen[k]
		if !s.placed && !a.Placed.IsZero() && !a.Waited.IsZero() {
			m.QueueWait.Observe(nonNegative(a.Placed.Sub(a.Waited)))
			s.placed = true
		}
		if !s.started && !a.Started.IsZero() && !a.Placed.IsZero() {
			m.Launch.Observe(nonNegative(a.Started.Sub(a.Placed)))
			s.started = true
		}
		m.att.seen[k] = s
	}
	for k := range m.att.seen {
		if !live[k] {
			delete(m.att.seen, k)
		}
	}
}

func nonNegative(d time.Duration) float64 { return max(d, 0).Seconds() }
