package natsort

import (
	"slices"
	"strings"
)

// Compare returns -1, 0 or +1 as a sorts before, equal to, or after b.
// Each string is read as a sequence of tokens: a maximal run of ASCII
// digits is one token compared by its value (any length: no overflow),
// any other byte is a token of its own compared as a byte; a digit run
// compares with a byte as its first digit would. Sequences compare token
// by token, a prefix first. Strings equal token for token (they differ
// only in leading zeros) compare as plain strings, so 0 means a == b.
func Compare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if !isDigit(ca) || !isDigit(cb) {
			if ca != cb {
				return cmpByte(ca, cb)
			}
			i++
			j++
			continue
		}
		ei, ej := digitsEnd(a, i), digitsEnd(b, j)
		if c := compareNumbers(a[i:ei], b[j:ej]); c != 0 {
			return c
		}
		i, j = ei, ej
	}
	switch {
	case i < len(a):
		return 1 // b is a prefix of a, token for token
	case j < len(b):
		return -1
	}
	return strings.Compare(a, b)
}

// Sort sorts s in natural order.
func Sort(s []string) { slices.SortFunc(s, Compare) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func cmpByte(x, y byte) int {
	if x < y {
		return -1
	}
	return 1
}

// digitsEnd is the end of the digit run of s that starts at i.
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// compareNumbers compares two digit runs by value: without their leading
// zeros, the longer is the larger, and equal lengths compare digit by digit.
func compareNumbers(x, y string) int {
	x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	return strings.Compare(x, y)
}
