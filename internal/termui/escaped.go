package termui

import (
	"strconv"
	"strings"
	"unicode"
)

// Escaped is a text that may hold anything (a library's error, which may
// quote the bytes it could not read: a file's, a message's) fit for one
// line of a log or a terminal: what is not printable is escaped as Go
// quotes it (\n, \x1b, \u2028), and the text is cut after max runes, with
// "…". Unlike SingleLine, it keeps what it escapes visible: the reader
// sees which byte was wrong.
func Escaped(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n++; n > max {
			b.WriteString("…")
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		}
	}
	return b.String()
}
