package placement

import "fmt"

// mergeHostfile combines repeated hosts into one launch unit (GERBIL's
// combine_containers) and rejects hosts the snapshot does not know.
func mergeHostfile(hf []HostSlots, snapIdx map[string]int) ([]HostSlots, error) {
	var out []HostSlots
	at := map[string]int{}
	for _, h := range hf {
		if _, ok := snapIdx[h.Host]; !ok {
			return nil, fmt.Errorf("hostfile host %q: %w", h.Host, ErrUnknownHost)
		}
		if x, ok := at[h.Host]; ok {
			out[x].Slots += h.Slots
			continue
		}
		at[h.Host] = len(out)
		out = append(out, h)
	}
	return out, nil
}

func sumHosts(hf []HostSlots) int {
	t := 0
	for _, h := range hf {
		t += h.Slots
	}
	return t
}

// hostfileNodes resolves the hostfile for the modes that keep its locations:
// every host must be usable, since shoal may not move the job elsewhere.
func (p *problem) hostfileNodes(hf []HostSlots) ([]int, error) {
	g := make([]int, 0, len(hf))
	for _, h := range hf {
		si := p.snapIdx[h.Host]
		nd := &p.snap.Nodes[si]
		switch pe, ok := hasPEs(nd, p.req.PEs); {
		case !nd.Alive:
			return nil, fmt.Errorf("hostfile host %q (relax %q keeps locations): %w", h.Host, p.req.Relax, ErrDeadHost)
		case nd.LogicalCores() == 0:
			return nil, fmt.Errorf("%w: hostfile host %q has not reported its cores", ErrInvalidRequest, h.Host)
		case !ok:
			return nil, fmt.Errorf("%w: hostfile host %q has no %s the job needs", ErrInvalidRequest, h.Host, pe)
		}
		g = append(g, p.elig[si])
	}
	return g, nil
}
