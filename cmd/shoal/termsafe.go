package main

import (
	"unicode/utf8"

	"github.com/shoal-hpc/shoal/internal/termsafe"
)

// safe is termsafe.Safe: every string another user chose goes through it
// before a human-readable listing prints it; --json output stays exact.
func safe(s string) string { return termsafe.Safe(s) }

// cell is s made safe and cut to at most n runes, on a rune boundary,
// with "…" marking the cut: a table column of bounded width that stays
// valid UTF-8 whatever the input.
func cell(s string, n int) string {
	s = safe(s)
	if n < 1 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + "…"
}
