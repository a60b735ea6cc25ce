package confine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a memory size as Slurm's --mem does: a whole number with
// an optional K, M, G or T suffix (any case, binary units), a plain number
// being megabytes. flag names the option in the error, e.g. "--mem".
func ParseSize(flag, s string) (uint64, error) {
	const want = "want a whole number of megabytes or one with a K, M, G or T suffix, e.g. 64M or 2G"
	digits, shift := s, uint(20)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			digits, shift = s[:n-1], 10
		case 'm', 'M':
			digits, shift = s[:n-1], 20
		case 'g', 'G':
			digits, shift = s[:n-1], 30
		case 't', 'T':
			digits, shift = s[:n-1], 40
		}
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, fmt.Errorf("%s %q: not a size; %s", flag, s, want)
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || v > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%s %q: too large; %s", flag, s, want)
	}
	if v == 0 {
		return 0, fmt.Errorf("%s %q: must be more than zero; %s", flag, s, want)
	}
	return v << shift, nil
}

// FormatSize gives a byte count for people, in the largest unit it
// reaches: exactly when the unit divides it, as ParseSize reads it (1 << 30
// is "1G"), else to a tenth ("100.7M"); under 1K in bytes ("512B").
func FormatSize(b uint64) string {
	for _, u := range []struct {
		shift  uint
		suffix string
	}{{40, "T"}, {30, "G"}, {20, "M"}, {10, "K"}} {
		if b < 1<<u.shift {
			continue
		}
		if b%(1<<u.shift) == 0 {
			return strconv.FormatUint(b>>u.shift, 10) + u.suffix
		}
		return strconv.FormatFloat(float64(b)/float64(uint64(1)<<u.shift), 'f', 1, 64) + u.suffix
	}
	return strconv.FormatUint(b, 10) + "B"
}
