package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The #SBATCH dialect: a Slurm user's script runs unchanged. Each #SBATCH
// option is translated into shoal's job options, with Slurm's meaning
// (inside #SBATCH, -o is the output file and -p the partition, as in
// sbatch), and the translated words are parsed against scriptOptions like
// a #SHOAL line: the dialect can set nothing a #SHOAL line could not.

// sbatchPrefix starts a Slurm directive line.
const sbatchPrefix = "#SBATCH"

// slurmOption is one option sbatch takes in a script.
type slurmOption struct {
	long  string
	short byte // 0: none
	value bool // takes a value (a flag without one may still be given --flag=VALUE)
	// shoal is the job option it becomes; "" for the job's size (-n, -N,
	// --ntasks-per-node), which is translated from all three together.
	shoal string
}

// sbatchOptions are the options of sbatch a script may give. Each maps to
// a job option of jobOptionFlags, where those shoal accepts without
// honouring (--partition, --mail-type, ...) are reported at submit.
var sbatchOptions = []slurmOption{
	{"ntasks", 'n', true, ""},
	{"nodes", 'N', true, ""},
	{"ntasks-per-node", 0, true, ""},
	{"cpus-per-task", 'c', true, "cpus-per-rank"},
	{"mem", 0, true, "mem"},
	{"mem-per-cpu", 0, true, "mem-per-cpu"},
	{"time", 't', true, "timeout"},
	{"job-name", 'J', true, "job-name"},
	{"output", 'o', true, "output"},
	{"error", 'e', true, "error"},
	{"array", 'a', true, "array"},
	{"dependency", 'd', true, "dependency"},
	{"begin", 'b', true, "begin"},
	{"account", 'A', true, "account"},
	{"partition", 'p', true, "partition"},
	{"nodelist", 'w', true, "nodelist"},
	{"exclude", 'x', true, "exclude"},
	{"constraint", 'C', true, "constraint"},
	{"exclusive", 0, false, "exclusive"},
	{"export", 0, true, "export"},
	{"chdir", 'D', true, "workdir"},
	{"oversubscribe", 's', false, "oversubscribe"},
	{"priority", 0, true, "priority"},
	{"parsable", 0, false, "parsable"},
	{"mail-type", 0, true, "mail-type"},
	{"mail-user", 0, true, "mail-user"},
	{"qos", 'q', true, "qos"},
	{"signal", 0, true, "signal"},
	{"requeue", 0, false, "requeue"},
	{"no-requeue", 0, false, "no-requeue"},
}

// sbatchSize collects the options that size the job, with their lines.
type sbatchSize struct {
	ntasks, nodes, perNode string
	line                   int
}

// translateSbatch turns one #SBATCH line's words into shoal job options.
// The size options are gathered into size, to translate once every line
// is read (-N 2 on one line and --ntasks-per-node 4 on the next).
func translateSbatch(words []string, n int, size *sbatchSize) ([]string, error) {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		opt, val, hasVal, err := lookupSbatch(w)
		if err != nil {
			return nil, err
		}
		if opt.value && !hasVal {
			if i+1 >= len(words) {
				return nil, fmt.Errorf("%s needs a value", slurmName(opt))
			}
			i++
			val, hasVal = words[i], true
		}
		switch opt.long {
		case "ntasks":
			size.ntasks, size.line = val, n
			continue
		case "nodes":
			size.nodes, size.line = val, n
			continue
		case "ntasks-per-node":
			size.perNode, size.line = val, n
			continue
		case "time":
			d, err := parseTimeLimit(val)
			if err != nil {
				return nil, err
			}
			val = d.String()
		}
		if !opt.value {
			// --exclusive=user, --requeue: the value only refines what
			// shoal does not honour anyway.
			out = append(out, "--"+opt.shoal)
			continue
		}
		out = append(out, "--"+opt.shoal, val)
	}
	return out, nil
}

// lookupSbatch finds the option a word names: --long, --long=VALUE, -x,
// or -xVALUE glued as sbatch takes it (-n8).
func lookupSbatch(w string) (opt slurmOption, val string, hasVal bool, err error) {
	switch {
	case strings.HasPrefix(w, "--"):
		name, v, has := strings.Cut(w[2:], "=")
		for _, o := range sbatchOptions {
			if o.long == name {
				return o, v, has, nil
			}
		}
		return opt, "", false, unknownSbatch(name)
	case len(w) >= 2 && w[0] == '-':
		for _, o := range sbatchOptions {
			if o.short == w[1] {
				if len(w) > 2 && !o.value {
					return opt, "", false, fmt.Errorf("-%c takes no value (got %q)", w[1], w)
				}
				return o, w[2:], len(w) > 2, nil
			}
		}
		return opt, "", false, unknownSbatch(w[1:2])
	}
	return opt, "", false, fmt.Errorf("unexpected argument %q: a directive holds options only", w)
}

// unknownSbatch names an option sbatch-in-shoal does not take: refused as
// a connection or credential flag, or unknown with the nearest option.
func unknownSbatch(name string) error {
	if why := scriptRefusal(name); why != "" {
		return errors.New(why)
	}
	var names []string
	for _, o := range sbatchOptions {
		names = append(names, "--"+o.long)
		if o.short != 0 {
			names = append(names, "-"+string(o.short))
		}
	}
	msg := fmt.Sprintf("unknown #SBATCH option %s", dashed(name))
	if s := nearest(dashed(name), names); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return errors.New(msg + " (see 'shoal submit --help')")
}

func slurmName(o slurmOption) string {
	if o.short != 0 {
		return fmt.Sprintf("-%c/--%s", o.short, o.long)
	}
	return "--" + o.long
}

// words translates the job's size as Slurm reads it: -n tasks anywhere;
// -N nodes of one task each unless --ntasks-per-node or -n says more;
// --ntasks-per-node alone on one node. Slurm spreads -n over -N nodes as
// evenly as it can; shoal places the same number on every node, so -n
// must be a multiple of -N.
func (s sbatchSize) words() ([]string, error) {
	num := func(flag, v string) (int, error) {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 {
			if strings.Contains(v, "-") && flag == "-N/--nodes" {
				return 0, fmt.Errorf("%s %q: shoal places a fixed number of nodes; give one number (or --nodes MIN:MAX in a #SHOAL line for an elastic job)", flag, v)
			}
			return 0, fmt.Errorf("%s %q: want a whole number, at least 1", flag, v)
		}
		return k, nil
	}
	var n, nodes, per int
	var err error
	if s.ntasks != "" {
		if n, err = num("-n/--ntasks", s.ntasks); err != nil {
			return nil, err
		}
	}
	if s.nodes != "" {
		if nodes, err = num("-N/--nodes", s.nodes); err != nil {
			return nil, err
		}
	}
	if s.perNode != "" {
		if per, err = num("--ntasks-per-node", s.perNode); err != nil {
			return nil, err
		}
	}
	switch {
	case n == 0 && nodes == 0 && per == 0:
		return nil, nil
	case per > 0:
		if nodes == 0 {
			nodes = 1
			if n > 0 {
				return []string{"--np", strconv.Itoa(n), "--ppn", strconv.Itoa(per)}, nil
			}
		}
		if n > 0 && n != nodes*per {
			return nil, fmt.Errorf("-n %d with -N %d and --ntasks-per-node %d: give two of the three, or make -n their product", n, nodes, per)
		}
		return []string{"--np", strconv.Itoa(nodes * per), "--ppn", strconv.Itoa(per)}, nil
	case nodes > 0 && n == 0:
		return []string{"--np", strconv.Itoa(nodes), "--ppn", "1"}, nil
	case nodes > 0:
		if n%nodes != 0 {
			return nil, fmt.Errorf("-n %d over -N %d: shoal puts the same number of tasks on every node; make -n a multiple of -N, or give --ntasks-per-node", n, nodes)
		}
		return []string{"--np", strconv.Itoa(n), "--ppn", strconv.Itoa(n / nodes)}, nil
	}
	return []string{"--np", strconv.Itoa(n)}, nil
}

// parseTimeLimit reads a time limit as sbatch's -t does — MM, MM:SS,
// HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED or INFINITE (0, no limit)
// — or as a Go duration (90m, 1h30m), shoal's own form.
func parseTimeLimit(s string) (time.Duration, error) {
	bad := fmt.Errorf("time limit %q: use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (Slurm's) or a duration such as 90m", s)
	if s == "UNLIMITED" || s == "INFINITE" {
		return 0, nil
	}
	if d, err := time.ParseDuration(s); err == nil && strings.Trim(s, "0123456789") != "" {
		if d < 0 {
			return 0, bad
		}
		return d, nil
	}
	days, clock, hasDays := strings.Cut(s, "-")
	var d int
	if hasDays {
		k, err := strconv.Atoi(days)
		if err != nil || k < 0 || days == "" || days[0] == '+' {
			return 0, bad
		}
		d = k
	} else {
		clock = days
	}
	parts := strings.Split(clock, ":")
	if len(parts) > 3 {
		return 0, bad
	}
	vals := make([]int, len(parts))
	for i, p := range parts {
		k, err := strconv.Atoi(p)
		if err != nil || k < 0 || p == "" || p[0] == '+' {
			return 0, bad
		}
		vals[i] = k
	}
	var h, m, sec int
	switch {
	case hasDays && len(vals) == 1: // D-HH
		h = vals[0]
	case hasDays && len(vals) == 2: // D-HH:MM
		h, m = vals[0], vals[1]
	case len(vals) == 3: // [D-]HH:MM:SS
		h, m, sec = vals[0], vals[1], vals[2]
	case len(vals) == 2: // MM:SS
		m, sec = vals[0], vals[1]
	default: // MM
		m = vals[0]
	}
	total := time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	if total > 366*24*time.Hour {
		return 0, fmt.Errorf("time limit %q: more than a year", s)
	}
	return total, nil
}

// nearest is the candidate closest to name in edit distance, if close
// enough to be a typo (at most a third of the name's length).
func nearest(name string, candidates []string) string {
	best, bestD := "", len(name)/3+1
	for _, c := range slices.Compact(slices.Sorted(slices.Values(candidates))) {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
