package termui

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every text a server controls (an agent's name, a card's fields, a
// conversation's title, a status message, an error's text, a file's name)
// passes through one scrubber before it reaches a terminal: Text for a
// text that may have lines, SingleLine for a cell or a label, Reply for an
// agent's reply printed on a terminal. What they take out is what could
// make a terminal do something other than show the text:
//
//   - escape sequences, whole: CSI (ESC [ … final byte: colours, cursor
//     moves, erasing), OSC (ESC ] … to BEL or ST: the window title, a
//     hyperlink, OSC 52's clipboard write), DCS, SOS, PM and APC strings,
//     and the two- and three-byte escapes (ESC c resets the terminal);
//     an introducer whose string never ends is dropped alone, so that no
//     text after it is hidden;
//   - the C1 controls (U+0080–U+009F), U+009B (CSI) and U+009D (OSC)
//     with the sequences they start;
//   - the other C0 controls and DEL; a carriage return (which would let
//     what follows overwrite the line) becomes a line break, and a CR LF
//     one line break;
//   - Unicode's format characters (category Cf), as SafeFileName drops
//     them: the bidirectional controls (U+061C, U+200E, U+200F,
//     U+202A–U+202E, U+2066–U+2069: a right-to-left override shows
//     "exe.txt" for "\u202etxt.exe"), the zero-width ones (U+200B–U+200D,
//     U+2060–U+2064, U+FEFF), the tag characters (U+E0000–U+E007F), the
//     soft hyphen: invisible, they make two names or ids that differ look
//     the same. Reply alone keeps the zero-width joiner and non-joiner
//     (U+200D, U+200C): a reply is prose, where they join emoji sequences
//     (a family, a flag) and shape Persian and Indic script, and no one
//     types a reply back; a name, an id, a cell or a label drops them too;
//   - Unicode's line and paragraph separators (U+2028, U+2029), which
//     become line breaks;
//   - bytes that are not UTF-8 (a lone 0x9B is a CSI to a terminal in an
//     8-bit mode), which become U+FFFD.
//
// Text keeps line breaks and tabs; SingleLine keeps the first line only;
// Reply also keeps SGR sequences (CSI … m: colours, bold), ending the text
// with a reset when it kept any.

// Text is s fit for a terminal, its lines and tabs kept.
func Text(s string) string { return scrub(s, false) }

// Reply is an agent's reply fit for a terminal: Text, with its colours
// and styles (SGR sequences) kept, and a reset after them so that none
// outlasts the reply.
func Reply(s string) string { return scrub(s, true) }

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18 // CAN and SUB abort a sequence
	sub = 0x1a
	c1  = 0x80
	csi = 0x9b // the C1 controls that start a sequence
	dcs = 0x90
	sos = 0x98
	st  = 0x9c
	osc = 0x9d
	pm  = 0x9e
	apc = 0x9f
)

// scrub is the one scrubber (see above); keepSGR keeps SGR sequences.
func scrub(s string, keepSGR bool) string {
	var b strings.Builder
	b.Grow(len(s))
	kept := false
	noEnd := false // no string terminator after here: stop looking for one
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case r == esc:
			end, sgr := escEnd(s, i+n, &noEnd)
			if sgr && keepSGR {
				b.WriteString(s[i:end])
				kept = true
			}
			i = end
			continue
		case r == csi:
			i, _ = csiEnd(s, i+n)
			continue
		case r == osc || r == dcs || r == sos || r == pm || r == apc:
			i = stringEnd(s, i+n, &noEnd)
			continue
		case r == '\r':
			b.WriteByte('\n')
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		case r == '\u2028' || r == '\u2029':
			b.WriteByte('\n')
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r >= c1 && r < 0xa0 || formatChar(r, keepSGR):
			// dropped
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	if kept {
		b.WriteString("\x1b[0m")
	}
	return b.String()
}

// escEnd is where the escape sequence whose ESC is just before i ends,
// and whether it is an SGR sequence. An ESC that starts none ends at once
// (it alone is dropped).
func escEnd(s string, i int, noEnd *bool) (int, bool) {
	next, adv := nextRune(s, i)
	switch {
	case next == '[':
		end, final := csiEnd(s, i+adv)
		return end, final == 'm' && sgrParams(s[i+adv:end-1])
	case next == ']' || next == 'P' || next == 'X' || next == '^' || next == '_':
		return stringEnd(s, i+adv, noEnd), false
	case next >= 0x20 && next <= 0x2f: // nF: intermediates, then a final byte
		j := i + adv
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j, false
	case next >= 0x30 && next <= 0x7e: // Fp, Fe, Fs: one byte
		return i + adv, false
	}
	return i, false
}

func nextRune(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(s[i:])
}

// csiEnd is where the CSI sequence whose parameters start at i ends, and
// its final byte (0 when it has none: the sequence ends at the first byte
// that is neither a parameter, an intermediate nor a final byte, which
// stays).
func csiEnd(s string, i int) (int, byte) {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		return i + 1, s[i]
	}
	return i, 0
}

// sgrParams reports whether p, the parameters of a CSI … m sequence, are
// those of SGR: digits and separators only (no private marker, no
// intermediate byte).
func sgrParams(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}

// stringEnd is where the control string (OSC, DCS, SOS, PM, APC) whose
// body starts at i ends: after BEL, ST (ESC \ or U+009C), CAN or SUB,
// or before an ESC that starts something else. A string that never ends
// is left as text: only its introducer (already passed) is dropped.
// *noEnd remembers that no terminator follows, so that many introducers
// cost one search, not one each.
func stringEnd(s string, i int, noEnd *bool) int {
	if !*noEnd {
		j := strings.IndexAny(s[i:], "\x07\x1b\x18\x1a\u009c")
		if j >= 0 {
			j += i
			switch {
			case s[j] == esc && j+1 < len(s) && s[j+1] == '\\':
				return j + 2
			case s[j] == esc:
				return j
			case s[j] == bel || s[j] == can || s[j] == sub:
				return j + 1
			}
			return j + len("\u009c")
		}
		*noEnd = true
	}
	return i
}

// formatChar reports Unicode's format characters (Cf), which the scrubber
// drops; in a reply (prose) the zero-width joiner and non-joiner stay.
func formatChar(r rune, reply bool) bool {
	if r < 0xad || reply && (r == '\u200c' || r == '\u200d') {
		return false
	}
	return unicode.Is(unicode.Cf, r)
}
