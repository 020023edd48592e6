// Package truncate is the one way to bound a string to a column's size.
//
// The columns that hold reasons, messages and descriptions are bounded in bytes (ent's MaxLen
// validators count bytes), and PostgreSQL refuses a string that is not valid UTF-8. Cutting at
// a byte offset (s[:1000]) can split a multi-byte character, so the row is refused and whoever
// sent it — a node agent reporting, a worker recording a failure — tries the same write
// forever. [String] cuts at a character boundary instead.
package truncate

import "unicode/utf8"

// Ellipsis marks a cut at the end of a string.
const Ellipsis = "…"

// String returns s when it has at most max bytes, else the longest prefix of s that ends on a
// UTF-8 character boundary and leaves room for [Ellipsis] within max bytes, followed by
// Ellipsis. The result is always at most max bytes and, when s is valid UTF-8, valid UTF-8.
// A max smaller than the ellipsis gives a plain cut at a character boundary.
func String(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	mark := Ellipsis
	if max < len(mark) {
		mark = ""
	}
	n := max - len(mark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
