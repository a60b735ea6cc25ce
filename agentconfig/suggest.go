package agentconfig

import "strings"

// suggest returns the known key closest to name, if one is close enough to
// be a typo (edit distance at most 2, or one containing the other).
func suggest(name string) string {
	n := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	best, bestD := "", 3
	for _, k := range keys {
		if d := editDistance(n, k.Name()); d < bestD {
			best, bestD = k.Name(), d
		}
	}
	if best != "" || len(n) < 4 {
		return best
	}
	for _, k := range keys {
		if strings.Contains(k.Name(), n) || strings.Contains(n, k.Name()) {
			return k.Name()
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
