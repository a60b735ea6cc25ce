package httpapi

import (
	"fmt"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// checkMem refuses at submit a job whose memory limit no node could ever
// give it: more than the largest node that confines its jobs has, or no
// node that confines at all. A job that fits waits for memory
// to be free instead (the leader's placement).
func (s *Server) checkMem(sp *raftfsm.JobSpec) error {
	if !sp.HasMem() {
		return nil
	}
	var largest uint64
	var largestNode string
	alive, confined := 0, 0
	why := ""
	for _, e := range s.be.Nodes() {
		if !e.HasState || e.Status != nodestate.StatusAlive {
			continue
		}
		alive++
		st := e.State.Static
		if !st.Confined {
			why = e.State.Name + ": " + st.Unconfined
			continue
		}
		confined++
		if st.MemTotal > largest {
			largest, largestNode = st.MemTotal, e.State.Name
		}
	}
	if alive == 0 {
		return nil // nothing known yet: placement waits
	}
	if confined == 0 {
		return fmt.Errorf("the job has a memory limit but none of the %d alive nodes runs jobs in cgroups, so none can enforce it (%s): drop --mem/--mem-per-rank or fix the nodes' cgroups", alive, why)
	}
	need, flag := sp.MemPerNode, "--mem"
	if sp.MemPerRank > 0 {
		need, flag = sp.MemPerRank*uint64(max(sp.PPN, 1)), "--mem-per-rank"
	}
	if need > largest {
		return fmt.Errorf("%s %s is more than any node has: the largest node that confines jobs, %s, has %s of memory", flag, confine.FormatSize(need), largestNode, confine.FormatSize(largest))
	}
	return nil
}

// toAPIUsage is an attempt's usage per node and in total (nil before any
// node reported).
func toAPIUsage(us []raftfsm.NodeUsage) ([]api.NodeUsage, *api.NodeUsage) {
	if len(us) == 0 {
		return nil, nil
	}
	out := make([]api.NodeUsage, len(us))
	for i, u := range us {
		out[i] = apiUsage(u)
	}
	t := apiUsage(raftfsm.UsageTotal(us))
	return out, &t
}

func apiUsage(u raftfsm.NodeUsage) api.NodeUsage {
	return api.NodeUsage{Node: u.Node, CPUSeconds: u.CPUSeconds, UserSeconds: u.UserSeconds, SystemSeconds: u.SystemSeconds,
		MaxRSSBytes: u.MaxRSSBytes, WallSeconds: u.Wall.Seconds(), MemLimitBytes: u.MemLimit, OOMKills: u.OOMKills}
}
