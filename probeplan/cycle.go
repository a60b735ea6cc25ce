package probeplan

import "time"

// Duty is one directed bandwidth test: From sends to To's probe server.
type Duty struct{ From, To string }

// Orient turns a plan's pairs into directed tests, A→B in even cycles and
// B→A in odd ones, so that a pair measured every cycle is measured in
// both directions in turn.
func Orient(rounds [][]Pair, cycle uint64) [][]Duty {
	out := make([][]Duty, len(rounds))
	for i, r := range rounds {
		out[i] = make([]Duty, len(r))
		for j, p := range r {
			out[i][j] = Duty{From: p.A, To: p.B}
			if cycle%2 == 1 {
				out[i][j] = Duty{From: p.B, To: p.A}
			}
		}
	}
	return out
}

// RoundAt is the index of the round running at now when rounds of
// roundLen follow each other from start: -1 before start, n after the
// last round.
func RoundAt(start time.Time, roundLen time.Duration, n int, now time.Time) int {
	if now.Before(start) {
		return -1
	}
	if roundLen <= 0 {
		return n
	}
	return int(min(int64(now.Sub(start)/roundLen), int64(n)))
}

// Remaining returns the rounds after round cur without the tests that
// involve a node gone reports, and without rounds left empty: what the
// leader records when a node dies mid-cycle, so the cycle goes on
// without it instead of waiting for it.
func Remaining(rounds [][]Duty, cur int, gone func(string) bool) [][]Duty {
	var out [][]Duty
	for i := max(cur+1, 0); i < len(rounds); i++ {
		var keep []Duty
		for _, d := range rounds[i] {
			if !gone(d.From) && !gone(d.To) {
				keep = append(keep, d)
			}
		}
		if len(keep) > 0 {
			out = append(out, keep)
		}
	}
	return out
}

// Involves reports whether any test of rounds from round cur on involves
// a node gone reports.
func Involves(rounds [][]Duty, cur int, gone func(string) bool) bool {
	for i := max(cur, 0); i < len(rounds); i++ {
		for _, d := range rounds[i] {
			if gone(d.From) || gone(d.To) {
				return true
			}
		}
	}
	return false
}

// NextCycleAt is when the cycle after one that started at start, with n
// rounds of roundLen recorded at setAt, may begin: every interval, but
// never before the last round has ended.
func NextCycleAt(start, setAt time.Time, n int, roundLen, interval time.Duration) time.Time {
	end := setAt.Add(time.Duration(n) * roundLen)
	next := start.Add(interval)
	if end.After(next) {
		return end
	}
	return next
}
