package termui

import (
	"strings"
	"testing"
)

// FuzzScrub checks the scrubber on any text:
//
//   - what Text, SingleLine and Reply return never holds an ESC (Reply:
//     other than an SGR sequence), a C0 control other than tab and line
//     feed, DEL, a C1 control, a format character (Cf: bidirectional
//     controls, zero-width characters, tags; Reply may keep U+200C and
//     U+200D, the joiners of emoji and scripts), a line or paragraph
//     separator, or bytes that are not UTF-8;
//   - SingleLine is one line, with no tab;
//   - text with none of those is left as it is, by Text and Reply;
//   - Text of its own output changes nothing.
func FuzzScrub(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.in)
	}
	f.Add("\x1b[1;31mred\x1b[0m and \x1b]52;c;eA==\x07")
	f.Add("plain text, 日本語")
	f.Add("ev\u200bil \u2060id\ufeff \U000E0041\U000E007F \u00ad 👨\u200d👩\u200d👧 می\u200cخواهم")
	f.Add(strings.Repeat("\x1b]", 100) + "x")
	f.Fuzz(func(t *testing.T, s string) {
		text, line, reply := Text(s), SingleLine(s), Reply(s)
		for _, o := range []struct {
			name, out string
			reply     bool
		}{{"Text", text, false}, {"SingleLine", line, false}, {"Reply", reply, true}} {
			if why := forbidden(o.out, o.reply); why != "" {
				t.Fatalf("%s(%q) = %q holds %s", o.name, s, o.out, why)
			}
		}
		if strings.ContainsAny(line, "\n\t") {
			t.Fatalf("SingleLine(%q) = %q is not one line", s, line)
		}
		if forbidden(s, false) == "" {
			if text != s || reply != s {
				t.Fatalf("clean text changed: %q → Text %q, Reply %q", s, text, reply)
			}
		}
		if again := Text(text); again != text {
			t.Fatalf("Text is not stable: %q → %q → %q", s, text, again)
		}
	})
}
