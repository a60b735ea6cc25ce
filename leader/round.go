package leader

// Ready is everything one round of the whole leader decides: the raft
// commands to propose, in order, the changes to raft's configuration,
// and the Book for the next round. The agent runs the duties in loops of
// their own (a slow placement must not hold up probe supervision);
// Round runs them one after the other, as the tests and traces do.
type Ready struct {
	Commands   []Command
	Membership []Action
	Book       Book
}

// Round runs every duty of the leader once on v: membership, jobs, probes
// and job GC, in that order.
func Round(v View, b Book) Ready {
	r := Ready{Membership: Membership(v)}
	var cmds []Command
	cmds, b.Jobs = Schedule(v, b.Jobs)
	r.Commands = append(r.Commands, cmds...)
	cmds, b.Probes = Probes(v, b.Probes)
	r.Commands = append(r.Commands, cmds...)
	cmds, b.GC = CollectJobs(v, b.GC)
	r.Commands = append(r.Commands, cmds...)
	r.Book = b
	return r
}
