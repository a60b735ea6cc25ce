package main

import (
	"fmt"
	"strings"
)

// slurmOpt is one option of a Slurm command as that command spells it.
type slurmOpt struct {
	long  string
	short byte // 0: none
	value bool
}

// slurmArgs is a Slurm command line read with getopt's rules, as Slurm's
// own commands read theirs: -x VALUE, -xVALUE, --long VALUE, --long=VALUE,
// bundled short flags (-hX), options and operands in any order, -- ending
// the options.
type slurmArgs struct {
	opts     map[string][]string // by long name; a flag's value is ""
	operands []string
}

func (a slurmArgs) has(long string) bool { _, ok := a.opts[long]; return ok }

// last is the option's last value ("" when not given).
func (a slurmArgs) last(long string) string {
	v := a.opts[long]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// list is every value of a list option, commas split.
func (a slurmArgs) list(long string) []string {
	var out []string
	for _, v := range a.opts[long] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// parseSlurmArgs reads args against opts; cmd names the command in errors.
func parseSlurmArgs(cmd string, args []string, opts []slurmOpt) (slurmArgs, error) {
	out := slurmArgs{opts: map[string][]string{}}
	byLong := map[string]slurmOpt{}
	byShort := map[byte]slurmOpt{}
	var names []string
	for _, o := range opts {
		byLong[o.long] = o
		names = append(names, "--"+o.long)
		if o.short != 0 {
			byShort[o.short] = o
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			out.operands = append(out.operands, args[i+1:]...)
			return out, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			o, ok := byLong[name]
			if !ok {
				msg := fmt.Sprintf("%s: unrecognized option '--%s'", cmd, name)
				if s := nearest("--"+name, names); s != "" {
					msg += "; did you mean " + s + "?"
				}
				return out, fmt.Errorf("%s (see '%s --help')", msg, cmd)
			}
			if o.value && !hasVal {
				if i+1 >= len(args) {
					return out, fmt.Errorf("%s: option '--%s' requires an argument", cmd, name)
				}
				i++
				val = args[i]
			}
			out.opts[o.long] = append(out.opts[o.long], val)
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				o, ok := byShort[a[k]]
				if !ok {
					return out, fmt.Errorf("%s: invalid option -- '%c' (see '%s --help')", cmd, a[k], cmd)
				}
				if !o.value {
					out.opts[o.long] = append(out.opts[o.long], "")
					continue
				}
				val := a[k+1:]
				if val == "" {
					if i+1 >= len(args) {
						return out, fmt.Errorf("%s: option requires an argument -- '%c'", cmd, a[k])
					}
					i++
					val = args[i]
				}
				out.opts[o.long] = append(out.opts[o.long], val)
				break
			}
		default:
			out.operands = append(out.operands, a)
		}
	}
	return out, nil
}
