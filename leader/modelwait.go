package leader

import (
	"fmt"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/netmodel"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// ModelCoverage is how much of the cluster the network model gives a
// bandwidth figure to, for the cold start: right after a cluster forms
// the probes have measured a few pairs, and a network-aware placement on
// that is a guess.
type ModelCoverage struct {
	// Measured and Total count the candidate nodes: alive, not drained,
	// running a bandwidth probe (a node without one can never be
	// measured, so nothing waits for it). Measured are those whose every
	// pair with another candidate has a figure.
	Measured, Total int
	// Missing lists the candidates without one, sorted.
	Missing []string
}

// Complete reports whether every candidate is measured.
func (c ModelCoverage) Complete() bool { return c.Measured >= c.Total }

// String is the figure users read in a wait reason.
func (c ModelCoverage) String() string {
	return fmt.Sprintf("%d of %d nodes measured", c.Measured, c.Total)
}

// ModelWaitReason is the kind of wait reason a job waiting for the network
// model carries (before the colon, as waitReasonStale compares).
const ModelWaitReason = "waiting for the network model"

// Coverage computes the network model's coverage of the candidate nodes
// (only those named in only, when set) from what Snapshot reads: raft's
// state (drains, inferred switches) and the nodes' rows. A node is
// measured when the model has its own link (measured against a peer on its
// switch, or across switches when it is alone on its switch) and a
// measured capacity to every switch of the other candidates, or, without
// a switch, a direct test with every other candidate.
func Coverage(st *raftfsm.State, nodes []Node, only []string) ModelCoverage {
	var names []string
	asg := netmodel.Assignment{}
	for _, nd := range nodes {
		if !nd.HasState || nd.Status != nodestate.StatusAlive || nd.ProbePort <= 0 {
			continue
		}
		if _, drained := st.Drained(nd.Name); drained || (len(only) > 0 && !slices.Contains(only, nd.Name)) {
			continue
		}
		names = append(names, nd.Name)
		if sw, ok := modelSwitch(st, nd.Name, nd.Attrs.Switch); ok {
			asg[nd.Name] = sw
		}
	}
	cov := ModelCoverage{Total: len(names)}
	if len(names) < 2 {
		cov.Measured = cov.Total
		return cov
	}
	_, _, ms := modelInputs(nodes)
	t, guess := netmodel.Build(asg, ms, netmodel.DefaultConfig()).TablesAndGuesses(names)
	perSwitch := make([]int, t.NS)
	for i := range names {
		if t.Sw[i] >= 0 {
			perSwitch[t.Sw[i]]++
		}
	}
	direct := make([]int, len(names))
	for i, ds := range t.Direct {
		for _, d := range ds {
			if d.BW {
				direct[i]++
				direct[d.J]++
			}
		}
	}
	for i, n := range names {
		ok := direct[i] >= len(names)-1
		if !ok && t.Sw[i] >= 0 && t.Known[i] && (!guess.Node[i] || perSwitch[t.Sw[i]] < 2) {
			ok = true
			for s := range t.NS {
				k := int(t.Sw[i])*t.NS + s
				if perSwitch[s] > 0 && (!t.SwOK[k] || guess.Switch[k]) {
					ok = false
				}
			}
		}
		if ok {
			cov.Measured++
		} else {
			cov.Missing = append(cov.Missing, n)
		}
	}
	slices.Sort(cov.Missing)
	return cov
}

// ModelWait decides whether a network-aware placement asked at asked
// waits, at now, for the network model: while the model does not cover
// the candidates (coverage, called only when the bound has not passed), for at most bound after asked, and only for nodes
// that became alive less than bound ago (a node whose probes never
// answer does not hold every placement back). bound <= 0 never waits.
// The reason is in Slurm's manner: "waiting for the network model: 4 of
// 10 nodes measured".
func ModelWait(coverage func() ModelCoverage, nodes []Node, asked, now time.Time, bound time.Duration) (string, bool) {
	if bound <= 0 || now.Sub(asked) >= bound {
		return "", false // before the coverage: it builds the model
	}
	cov := coverage()
	if cov.Complete() {
		return "", false
	}
	pending := false
	for _, nd := range nodes {
		if slices.Contains(cov.Missing, nd.Name) && now.Sub(nd.Since) < bound {
			pending = true
			break
		}
	}
	if !pending {
		return "", false
	}
	return ModelWaitReason + ": " + cov.String(), true
}

// modelGate is one scheduling round's view of the network model: the
// coverage of every candidate, computed once, when a job asks.
type modelGate struct {
	v   View
	all *ModelCoverage
}

// wait returns the reason j waits for the network model this round, ""
// when it does not: a non-network policy, an immediate job (it would fail
// rather than wait) and a retry never wait.
func (g *modelGate) wait(j *raftfsm.Job) string {
	bound := g.v.Config.PlacementModelWait
	if bound <= 0 || j.Spec.Immediate || !placement.ReadsNetwork(j.Spec.Policy) {
		return ""
	}
	coverage := func() ModelCoverage {
		if len(j.Spec.Hostfile) > 0 {
			var only []string
			for _, h := range j.Spec.Hostfile {
				only = append(only, h.Host)
			}
			return Coverage(g.v.State, g.v.Nodes, only)
		}
		if g.all == nil {
			c := Coverage(g.v.State, g.v.Nodes, nil)
			g.all = &c
		}
		return *g.all
	}
	r, _ := ModelWait(coverage, g.v.Nodes, j.SubmittedAt, g.v.Now, bound)
	return r
}
