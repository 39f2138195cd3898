package termui

import (
	"fmt"
	"unicode/utf8"
)

// JSON is a JSON document fit for a terminal: the same document, with each
// character a terminal may act on that encoding/json leaves raw written as
// a \uXXXX escape (a pair of them past U+FFFF). Those are DEL, the C1
// controls (U+0080–U+009F: U+009B is a CSI, U+009D an OSC), Unicode's
// format characters (Cf: bidi controls, zero-width and tag characters) and
// U+2028/U+2029. In a valid document they can only be inside a string,
// where the escape is the same value; a C0 control other than tab and line
// feed (none is raw in valid JSON) is escaped too, and a byte that is not
// UTF-8 becomes \ufffd, so that not even a document that is not JSON
// reaches a terminal raw. A document with none of them is returned as it
// is.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if jsonEscaped(r, n) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = append(out, `\ufffd`...)
		case jsonEscaped(r, n) && r > 0xffff:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		case jsonEscaped(r, n):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// jsonEscaped reports whether JSON escapes the rune r (of n bytes).
func jsonEscaped(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return true
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029':
		return true
	}
	return formatChar(r, false)
}
