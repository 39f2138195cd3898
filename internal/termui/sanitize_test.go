package termui

import (
	"strings"
	"testing"
	"unicode"
)

// hostile are texts a server may send, each with a sequence or control
// a terminal acts on, and what is left of them once scrubbed.
var hostile = []struct{ name, in, text, line string }{
	{"OSC 52 clipboard write, BEL", "a\x1b]52;c;cm0gLXJmIH4=\x07b", "ab", "ab"},
	{"OSC 0 window title, ST", "a\x1b]0;pwned\x1b\\b", "ab", "ab"},
	{"OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click", "click"},
	{"8-bit OSC, 8-bit ST", "a\u009d0;t\u009cb", "ab", "ab"},
	{"8-bit CSI", "a\u009b2Jb", "ab", "ab"},
	{"CSI clear screen, cursor home", "\x1b[2J\x1b[Hx", "x", "x"},
	{"CSI with a private marker", "\x1b[?1049hx", "x", "x"},
	{"SGR", "\x1b[31mred\x1b[0m", "red", "red"},
	{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab", "ab"},
	{"APC, PM, SOS", "a\x1b_x\x07b\x1b^y\x07c\x1bXz\x07d", "abcd", "abcd"},
	{"reset, cursor save", "a\x1bcb\x1b7c", "abc", "abc"},
	{"nF escape (charset)", "a\x1b(0b", "ab", "ab"},
	{"string cut by CAN", "a\x1b]0;t\x18b", "ab", "ab"},
	{"string cut by another ESC", "a\x1b]0;t\x1b[31mb", "ab", "ab"},
	{"unterminated OSC: only its introducer goes", "a\x1b]0;rest", "a0;rest", "a0;rest"},
	{"ESC at the end", "a\x1b", "a", "a"},
	{"carriage return overwrite", "safe\rEVIL", "safe\nEVIL", "safe …"},
	{"CR LF", "one\r\ntwo", "one\ntwo", "one …"},
	{"backspace, bell, DEL, NUL", "a\bb\x07c\x7fd\x00e", "abcde", "abcde"},
	{"C1 NEL", "a\u0085b", "ab", "ab"},
	{"bidi override", "\u202etxt.exe", "txt.exe", "txt.exe"},
	{"bidi isolates and marks", "a\u2066b\u2069c\u200ed\u200fe\u061cf", "abcdef", "abcdef"},
	{"zero-width space, joiners, word joiner, BOM", "ev\u200bil\u200c\u200d\u2060\u2064\ufeffid", "evilid", "evilid"},
	{"tag characters", "id\U000E0001\U000E0041\U000E007F", "id", "id"},
	{"soft hyphen", "ad\u00admin", "admin", "admin"},
	{"line separator", "one\u2028two\u2029three", "one\ntwo\nthree", "one …"},
	{"tabs", "a\tb", "a\tb", "a b"},
	{"invalid UTF-8, raw 0x9B", "a\x9b2Jb\xff", "a\uFFFD2Jb\uFFFD", "a\uFFFD2Jb\uFFFD"},
}

func TestScrubTable(t *testing.T) {
	for _, c := range hostile {
		if got := Text(c.in); got != c.text {
			t.Errorf("%s: Text(%q) = %q, want %q", c.name, c.in, got, c.text)
		}
		if got := SingleLine(c.in); got != c.line {
			t.Errorf("%s: SingleLine(%q) = %q, want %q", c.name, c.in, got, c.line)
		}
	}
	for _, s := range []string{"", "plain text", "Ünïcödé 日本語 🙂 emoji", "a\tb\nc", "ids: 3f6c-2e1a, <b>&amp;"} {
		if Text(s) != s || Reply(s) != s {
			t.Errorf("plain text changed: %q → %q, %q", s, Text(s), Reply(s))
		}
	}
	// A reply is prose: the joiners of an emoji sequence and of Persian
	// script stay; a name or a label drops them with every Cf.
	family, persian := "👨\u200d👩\u200d👧", "می\u200cخواهم"
	if Reply(family) != family || Reply(persian) != persian {
		t.Errorf("Reply dropped a joiner: %q, %q", Reply(family), Reply(persian))
	}
	if Text(family) != "👨👩👧" || SingleLine(persian) != "میخواهم" {
		t.Errorf("Text kept a joiner: %q, %q", Text(family), SingleLine(persian))
	}
}

// A reply on a terminal keeps its lines, tabs and colours (SGR), with a
// reset after them; every other sequence goes.
func TestReplyKeepsColoursOnly(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\x1b[1;31mbold red\x1b[0m\nnext\tline", "\x1b[1;31mbold red\x1b[0m\nnext\tline\x1b[0m"},
		{"\x1b[38:2:255:0:0mtruecolour", "\x1b[38:2:255:0:0mtruecolour\x1b[0m"},
		{"copy \x1b]52;c;ZWNobyBoaQ==\x07me", "copy me"},
		{"\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b[?25l\x1b[2Ahidden cursor, moved up", "hidden cursor, moved up"},
		{"\u009b31mC1 SGR is not kept", "C1 SGR is not kept"},
		{"\x1b[31 mintermediate", "intermediate"},
		{"over\rwrite", "over\nwrite"},
		{"\u202eevil", "evil"},
	} {
		if got := Reply(c.in); got != c.want {
			t.Errorf("Reply(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// forbidden says why s may not reach a terminal: an ESC (reply: other
// than an SGR sequence), a C0 control other than tab and line feed, DEL,
// a C1 control, a bidirectional control, a line or paragraph separator,
// or bytes that are not UTF-8.
func forbidden(s string, reply bool) string {
	if reply {
		s = stripSGR(s)
	}
	if strings.ToValidUTF8(s, "\uFFFD") != s {
		return "invalid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n':
		case r < 0x20 || r == 0x7f:
			return "a C0 control or DEL"
		case r >= 0x80 && r < 0xa0:
			return "a C1 control"
		case unicode.Is(unicode.Cf, r) && !(reply && (r == '\u200c' || r == '\u200d')):
			return "a format character (Cf: bidi, zero-width, tag)"
		case r == '\u2028' || r == '\u2029':
			return "a line or paragraph separator"
		}
	}
	return ""
}

// stripSGR removes the SGR sequences of s (ESC [ digits ; : m).
func stripSGR(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
			j++
		}
		if j < len(s) && s[j] == 'm' {
			s = s[j+1:]
			continue
		}
		b.WriteString(s[i:]) // not SGR: left for forbidden to find
		return b.String()
	}
}
