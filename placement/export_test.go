package placement

// PlaceAblated runs netload with some of its changes switched off, so the
// tests can measure what each one buys.
func PlaceAblated(s Snapshot, r Request, startOnly, noPolish, unbounded bool) (Decision, error) {
	r.Policy = PolicyNetload
	return place(s, r, netloadPolicy{startOnly: startOnly, noPolish: noPolish, unbounded: unbounded})
}
