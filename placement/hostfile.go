package placement

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseHostfile reads a hostfile in MPICH (`host:n`), Open MPI
// (`host slots=n [max_slots=m]`) or bare (`host`, one slot) form; `#` starts a
// comment. Repeated hosts are kept as separate entries (Place merges them).
// Errors name the line.
func ParseHostfile(text string) ([]HostSlots, error) {
	var out []HostSlots
	for ln, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		h, err := parseHostLine(f)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrHostfile, ln+1, err)
		}
		out = append(out, h)
	}
	return out, nil
}

func parseHostLine(f []string) (HostSlots, error) {
	host, slots := f[0], 1
	if i := strings.IndexByte(host, ':'); i >= 0 {
		n, err := parseSlots(host[i+1:])
		if err != nil {
			return HostSlots{}, err
		}
		host, slots = host[:i], n
		if len(f) > 1 {
			return HostSlots{}, fmt.Errorf("unexpected %q after %q", f[1], f[0])
		}
	}
	if err := checkHostName(host); err != nil {
		return HostSlots{}, err
	}
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return HostSlots{}, fmt.Errorf("unexpected %q: want slots=N", kv)
		}
		switch k {
		case "slots":
			n, err := parseSlots(v)
			if err != nil {
				return HostSlots{}, err
			}
			slots = n
		case "max_slots", "max-slots":
			if _, err := parseSlots(v); err != nil {
				return HostSlots{}, err
			}
		default:
			return HostSlots{}, fmt.Errorf("unknown option %q", k)
		}
	}
	return HostSlots{Host: host, Slots: slots}, nil
}

func parseSlots(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("slot count %q: %w", s, err)
	}
	if n < 1 || n > MaxProcs {
		return 0, fmt.Errorf("slot count %d: want 1..%d", n, MaxProcs)
	}
	return n, nil
}

func checkHostName(h string) error {
	if h == "" {
		return fmt.Errorf("empty host name")
	}
	for _, r := range h {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(":=,[]", r) {
			return fmt.Errorf("host name %q: character %q not allowed", h, r)
		}
	}
	return nil
}

// FormatHostfile prints a decision as a hostfile: "mpich" (host:n), "openmpi"
// (host slots=n) or "slurm" (a compressed nodelist such as node[01-03],gpu1).
func FormatHostfile(d Decision, format string) (string, error) {
	if d.Wait {
		return "", fmt.Errorf("format hostfile: %w: %s", ErrWait, d.WaitReason)
	}
	var b strings.Builder
	switch strings.ToLower(format) {
	case "mpich", "hydra":
		for _, h := range d.Hosts {
			fmt.Fprintf(&b, "%s:%d\n", h.Node, h.NP)
		}
	case "openmpi", "ompi":
		for _, h := range d.Hosts {
			fmt.Fprintf(&b, "%s slots=%d\n", h.Node, h.NP)
		}
	case "slurm":
		names := make([]string, len(d.Hosts))
		for i, h := range d.Hosts {
			names[i] = h.Node
		}
		b.WriteString(CompressNodelist(names))
		b.WriteByte('\n')
	default:
		return "", fmt.Errorf("format hostfile: unknown format %q: want mpich, openmpi or slurm", format)
	}
	return b.String(), nil
}
