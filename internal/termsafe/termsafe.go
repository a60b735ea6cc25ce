// Package termsafe makes strings that other users chose safe to print on
// a terminal.
package termsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Human-readable output shows strings other users chose: command lines,
// working directories, reasons, node names. Written raw, a control
// sequence among them (an OSC that sets the title, a CSI that clears the
// screen) would act on the terminal of whoever reads the listing, root
// included. So every such string goes through Safe before it is printed;
// --json output stays exact.

// Safe escapes what a terminal would act on, the way strconv.Quote
// writes it: C0 controls (tab and newline too: they would break a table's
// columns), DEL, C1 controls, the bidirectional overrides that reorder
// text on screen, and bytes that are not UTF-8 (as \xNN). A backslash is
// kept as it is, so ordinary paths and commands read unchanged.
func Safe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return true
		}
		i += n
	}
	return false
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
		return true // bidirectional embeddings, overrides, isolates and marks
	}
	return false
}
