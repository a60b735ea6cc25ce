package jobfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// CompressHosts writes node names as Slurm's hostlist does: names that
// differ only in a trailing number of the same width fold into one
// bracketed range, n01,n02,n03,n05 → n[01-03,05]. The order of first
// appearance of each prefix is kept, and the numbers within a prefix are
// listed in the order given (an allocation's order is its rank order), so
// only runs that climb by one fold together.
func CompressHosts(hosts []string) string {
	type group struct {
		prefix, suffix string
		width          int
		nums           []int
	}
	var groups []*group
	var out []string
	index := map[string]*group{}
	for _, h := range hosts {
		prefix, num, width, suffix, ok := splitNumber(h)
		if !ok {
			groups = append(groups, &group{prefix: h, width: -1})
			continue
		}
		key := prefix + "\x00" + suffix + "\x00" + strconv.Itoa(width)
		g := index[key]
		if g == nil {
			g = &group{prefix: prefix, suffix: suffix, width: width}
			index[key] = g
			groups = append(groups, g)
		}
		g.nums = append(g.nums, num)
	}
	for _, g := range groups {
		if g.width < 0 {
			out = append(out, g.prefix)
			continue
		}
		if len(g.nums) == 1 {
			out = append(out, fmt.Sprintf("%s%0*d%s", g.prefix, g.width, g.nums[0], g.suffix))
			continue
		}
		var ranges []string
		for i := 0; i < len(g.nums); {
			j := i
			for j+1 < len(g.nums) && g.nums[j+1] == g.nums[j]+1 {
				j++
			}
			if j == i {
				ranges = append(ranges, fmt.Sprintf("%0*d", g.width, g.nums[i]))
			} else {
				ranges = append(ranges, fmt.Sprintf("%0*d-%0*d", g.width, g.nums[i], g.width, g.nums[j]))
			}
			i = j + 1
		}
		out = append(out, g.prefix+"["+strings.Join(ranges, ",")+"]"+g.suffix)
	}
	return strings.Join(out, ",")
}

// splitNumber cuts a host name around its last run of digits: n01.lab →
// "n", 1, width 2, ".lab".
func splitNumber(h string) (prefix string, num, width int, suffix string, ok bool) {
	end := strings.LastIndexAny(h, "0123456789")
	if end < 0 {
		return "", 0, 0, "", false
	}
	start := end
	for start > 0 && h[start-1] >= '0' && h[start-1] <= '9' {
		start--
	}
	digits := h[start : end+1]
	if len(digits) > 9 {
		return "", 0, 0, "", false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, 0, "", false
	}
	return h[:start], n, len(digits), h[end+1:], true
}

// ExpandHosts reads a Slurm host list, the inverse of CompressHosts:
// names separated by commas, each with at most one bracketed set of
// numbers and ranges (n[01-03,05],login1 → n01 n02 n03 n05 login1); a
// range keeps the width of its first number.
func ExpandHosts(s string) ([]string, error) {
	var out []string
	for len(s) > 0 {
		end := strings.IndexAny(s, ",[")
		if end < 0 {
			out, s = append(out, s), ""
			break
		}
		if s[end] == ',' {
			if end == 0 {
				return nil, fmt.Errorf("host list %q: an empty name", s)
			}
			out, s = append(out, s[:end]), s[end+1:]
			continue
		}
		closing := strings.IndexByte(s[end:], ']')
		if closing < 0 {
			return nil, fmt.Errorf("host list: %q has no closing ]", s)
		}
		prefix, set, rest := s[:end], s[end+1:end+closing], s[end+closing+1:]
		suffix, after, _ := strings.Cut(rest, ",")
		if strings.ContainsAny(suffix, "[]") {
			return nil, fmt.Errorf("host list: %q has more than one bracket", s)
		}
		for _, part := range strings.Split(set, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			if !isRange {
				hi = lo
			}
			a, errA := strconv.Atoi(lo)
			b, errB := strconv.Atoi(hi)
			if errA != nil || errB != nil || a < 0 || b < a || b-a > 65535 {
				return nil, fmt.Errorf("host list: %q in [%s] is not a number or a range LOW-HIGH", part, set)
			}
			for k := a; k <= b; k++ {
				out = append(out, fmt.Sprintf("%s%0*d%s", prefix, len(lo), k, suffix))
			}
		}
		s = after
	}
	return out, nil
}
