package httpapi

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/events"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// nodeLookEvery bounds how often the pump reads gossip's table: at a
// thousand nodes it changes many times a second, and one look a half
// second tells every change of status as fast as anybody needs.
const nodeLookEvery = 500 * time.Millisecond

// pump is RunEvents' memory: the marks of what it saw last.
type pump struct {
	s      *Server
	stateI uint64
	jobs   map[uint64]events.JobMark
	nodesI uint64
	nodes  map[string]*events.NodeMark
	probes map[string]events.ProbeMark
	// nodesAt is when gossip was last looked at.
	nodesAt time.Time
	// primed: the first look only remembers, so a new stream is not
	// flooded with the whole cluster "submitted" and "alive".
	primed bool
}

// RunEvents derives the event stream of GET /v1/events until ctx ends:
// at each rise of the replicated state's index it compares every job with
// its mark, and at gossip's changes (at most every nodeLookEvery, and at
// least every Events.NodeUpdateEvery so that held-back updates and
// suspicions are told) every node and probe with theirs.
func (s *Server) RunEvents(ctx context.Context) {
	p := &pump{s: s, jobs: map[uint64]events.JobMark{}, nodes: map[string]*events.NodeMark{}, probes: map[string]events.ProbeMark{}}
	every := s.cfg.Events.orDefault().NodeUpdateEvery
	// The pump schedules its looks by the wall clock, as its timers run:
	// an injected clock that stands still would hold every update back.
	for {
		si, stateCh := s.be.StateWatch()
		if si != p.stateI || !p.primed {
			p.lookJobs(si)
		}
		ni, nodeCh := s.be.NodeWatch()
		since := time.Since(p.nodesAt)
		if !p.primed || ni != p.nodesI && since >= nodeLookEvery || since >= every {
			// At the index the jobs' events were told at, if higher: the
			// ring's indexes never go down.
			told, _ := s.events.Last()
			p.lookNodes(max(si, told), ni)
			since = 0
		}
		if !p.primed {
			s.events.Start(si)
		}
		p.primed = true
		s.events.SetFloor(si)
		// Wait for the state, or for gossip once a look is due again.
		var nodeWake <-chan struct{}
		next := every - since
		if ni == p.nodesI {
			nodeWake = nodeCh
		} else {
			next = min(next, nodeLookEvery-since)
		}
		timer := time.NewTimer(max(next, time.Millisecond))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-stateCh:
		case <-nodeWake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// lookJobs publishes what happened to the jobs since the last look, the
// state's index then being index. Its events carry the index of the state
// it read, which may be above index (StateWatch is raised a moment after
// each apply): a change is then never told at an index a blocking read
// already answered with a body that did not hold it, and that read wakes.
func (p *pump) lookJobs(index uint64) {
	var changed []*raftfsm.Job
	var gone []uint64
	var share map[string]float64
	kinds := map[uint64][]events.Change{}
	seen := make(map[uint64]bool, len(p.jobs))
	now := p.s.now()
	watched := index
	p.s.be.ViewAt(func(at uint64, st *raftfsm.State) {
		index = max(index, at)
		for id, j := range st.Jobs {
			seen[id] = true
			old, known := p.jobs[id]
			if known && events.Settled(old, j) {
				continue
			}
			m := events.MarkJob(j)
			var prev *events.JobMark
			if known {
				prev = &old
			}
			p.jobs[id] = m
			if !p.primed {
				continue
			}
			if cs := events.DiffJob(prev, &m); len(cs) > 0 {
				kinds[id] = cs
				// A copy: the payload is built outside the lock, and the
				// elastic view reads the FSM again.
				changed = append(changed, j.Clone())
			}
		}
		if len(changed) > 0 {
			share = raftfsm.FairShare(st, raftfsm.RecentUsage(st, now, 0))
		}
	})
	for id := range p.jobs {
		if !seen[id] {
			delete(p.jobs, id)
			gone = append(gone, id)
		}
	}
	var out []events.Event
	// In job order, so that a burst reads as the jobs were submitted.
	sortJobs(changed)
	for _, j := range changed {
		aj := p.s.toAPIJob(j)
		aj.EffectivePriority = raftfsm.EffectivePriority(j, share)
		for _, c := range kinds[j.ID] {
			e := events.Event{Index: index, Topic: c.Topic, Type: c.Type, Key: events.JobKey(j.ID), Payload: aj, Owner: j.Owner}
			if c.Topic == events.TopicAttempt {
				e.Key = events.AttemptKey(j.ID, c.Attempt)
				e.Payload = aj.Attempts[c.Attempt-1]
			}
			out = append(out, e)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		out = append(out, events.Event{Index: index, Topic: events.TopicJob, Type: "purged", Key: events.JobKey(id)})
	}
	p.stateI = watched
	p.s.events.Publish(out...)
}

// lookNodes publishes what happened to the nodes and probes since the
// last look, at the state's index (gossip's events share it).
func (p *pump) lookNodes(index, gossipIndex uint64) {
	s := p.s
	now := time.Now()
	every := s.cfg.Events.orDefault().NodeUpdateEvery
	entries := s.be.Nodes()
	var nodes []api.Node
	var marks []events.NodeMark
	for _, e := range entries {
		if !e.HasState {
			continue
		}
		nodes = append(nodes, toAPINode(e))
		marks = append(marks, events.NodeMark{Status: string(e.Status), Boot: e.State.Boot, Seq: e.State.Seq})
	}
	s.withDrains(nodes)
	var out []events.Event
	seen := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		seen[n.Name] = true
		marks[i].Drain = n.Drain
		types, next := events.DiffNode(p.nodes[n.Name], &marks[i], now, every)
		if !p.primed {
			next.Told = now
			types = nil
		}
		p.nodes[n.Name] = next
		for _, t := range types {
			out = append(out, events.Event{Index: index, Topic: events.TopicNode, Type: t, Key: n.Name, Payload: n})
		}
	}
	for _, name := range sortedKeys(p.nodes) {
		if !seen[name] {
			delete(p.nodes, name)
			out = append(out, events.Event{Index: index, Topic: events.TopicNode, Type: "removed", Key: name})
		}
	}
	probes := s.probeInfos()
	seenP := make(map[string]bool, len(probes))
	for _, pi := range probes {
		key := pi.Node + "/" + pi.Kind
		seenP[key] = true
		cur := events.ProbeMark{State: pi.State, Restarts: pi.Restarts, PID: pi.PID}
		var prev *events.ProbeMark
		if old, ok := p.probes[key]; ok {
			prev = &old
		}
		p.probes[key] = cur
		if !p.primed {
			continue
		}
		for _, t := range events.DiffProbe(prev, &cur) {
			out = append(out, events.Event{Index: index, Topic: events.TopicProbe, Type: t, Key: key, Payload: pi})
		}
	}
	for _, key := range sortedKeys(p.probes) {
		if !seenP[key] {
			delete(p.probes, key)
			out = append(out, events.Event{Index: index, Topic: events.TopicProbe, Type: "removed", Key: key})
		}
	}
	p.nodesI, p.nodesAt = gossipIndex, now
	s.events.Publish(out...)
}

func sortJobs(js []*raftfsm.Job) {
	slices.SortFunc(js, func(a, b *raftfsm.Job) int { return cmp.Compare(a.ID, b.ID) })
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
