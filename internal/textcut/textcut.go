// Package textcut holds the one rule for cutting a text to a number of
// bytes without splitting a UTF-8 character. It imports only unicode/utf8,
// so the client, the store and the courier all use it.
package textcut

import "unicode/utf8"

// Prefix returns the longest start of s of at most max bytes that ends at a
// character boundary: s itself when it fits, "" when max <= 0. A byte that
// is no UTF-8 start counts as part of the character before it, so an
// invalid s is cut as a valid one would be; the result is a prefix of s.
func Prefix(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
