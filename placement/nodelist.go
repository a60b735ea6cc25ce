package placement

import (
	"slices"
	"strconv"
	"strings"
)

// CompressNodelist writes names as a Slurm nodelist: names that differ only in
// a trailing number of the same width share brackets with ranges
// (node01,node02,node03,gpu1 -> node[01-03],gpu1). Groups keep the order of
// their first name; numbers inside a group are sorted.
func CompressNodelist(names []string) string {
	type key struct {
		prefix string
		width  int
	}
	var keys []key
	groups := map[key][]int{}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		d := 0
		for d < len(n) && n[len(n)-1-d] >= '0' && n[len(n)-1-d] <= '9' {
			d++
		}
		num, err := strconv.Atoi(n[len(n)-d:])
		if d == 0 || d > 9 || err != nil {
			out = append(out, n)
			continue
		}
		k := key{n[:len(n)-d], d}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
			out = append(out, "\x00"+strconv.Itoa(len(keys)-1)) // placeholder, filled below
		}
		groups[k] = append(groups[k], num)
	}
	for i, o := range out {
		if !strings.HasPrefix(o, "\x00") {
			continue
		}
		ki, _ := strconv.Atoi(o[1:])
		k := keys[ki]
		nums := groups[k]
		slices.Sort(nums)
		pad := func(v int) string {
			s := strconv.Itoa(v)
			for len(s) < k.width {
				s = "0" + s
			}
			return s
		}
		if len(nums) == 1 {
			out[i] = k.prefix + pad(nums[0])
			continue
		}
		var parts []string
		for a := 0; a < len(nums); {
			b := a
			for b+1 < len(nums) && nums[b+1] == nums[b]+1 {
				b++
			}
			if a == b {
				parts = append(parts, pad(nums[a]))
			} else {
				parts = append(parts, pad(nums[a])+"-"+pad(nums[b]))
			}
			a = b + 1
		}
		out[i] = k.prefix + "[" + strings.Join(parts, ",") + "]"
	}
	return strings.Join(out, ",")
}
