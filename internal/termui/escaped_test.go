package termui

import "testing"

// Escaped keeps a text on one line, every byte that is not printable
// shown as an escape, cut after max runes (internal/mcpserver's log and
// answers, internal/mcpinstall's refusals: one function for both).
func TestEscaped(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain text", 100, "plain text"},
		{"a\nb\x1b]52;c;aGk=\x07", 100, `a\nb\x1b]52;c;aGk=\a`},
		{"\u2028\u202e\u00a0é", 100, `\u2028\u202e\u00a0é`},
		{"bad \xff byte", 100, "bad \ufffd byte"},
		{"ééééé", 3, "ééé…"},
		{"abc", 3, "abc"},
		{"", 3, ""},
	} {
		if got := Escaped(tc.in, tc.max); got != tc.want {
			t.Errorf("Escaped(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
