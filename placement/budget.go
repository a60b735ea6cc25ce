package placement

// budget bounds the work of one placement. Every loop whose length depends on
// the request (processes filled one at a time, candidate groups grown from
// each start, subsets walked by the oracle) spends from it, and stops early
// once the request's Done channel is closed or its MaxSteps are spent; place
// then discards the half-made decision and returns the reason. Placement stays
// pure: the caller owns the channel, nothing here reads a clock.
type budget struct {
	done    <-chan struct{}
	max     int // 0: no cap
	used    int
	polled  int // used at the last look at done
	stopped error
}

// pollEvery is how many steps pass between two looks at the done channel, so
// that a tight loop pays for a select only once in a while.
const pollEvery = 1 << 12

func newBudget(r *Request) *budget { return &budget{done: r.Done, max: r.MaxSteps} }

// spend records k steps and reports whether the placement may go on.
func (b *budget) spend(k int) bool {
	if b == nil {
		return true
	}
	if b.stopped != nil {
		return false
	}
	b.used += k
	if b.max > 0 && b.used > b.max {
		b.stopped = ErrStepBudget
		return false
	}
	if b.done != nil && b.used-b.polled >= pollEvery {
		b.polled = b.used
		select {
		case <-b.done:
			b.stopped = ErrCanceled
			return false
		default:
		}
	}
	return true
}

// err is why the placement stopped early, nil when it did not.
func (b *budget) err() error {
	if b == nil {
		return nil
	}
	if b.stopped == nil && b.done != nil {
		select {
		case <-b.done:
			b.stopped = ErrCanceled
		default:
		}
	}
	return b.stopped
}
