package termui

import (
	"testing"
)

func TestJSONEscapesWhatATerminalActsOn(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":"plain, 日本語 🙂"}`, `{"a":"plain, 日本語 🙂"}`},
		{"{\"a\":\"\u009b2J\u009d0;t\u009c\"}", `{"a":"\u009b2J\u009d0;t\u009c"}`},
		{"{\"a\":\"x\x7fy\"}", `{"a":"x\u007fy"}`},
		{"{\"a\":\"\u202etxt.exe\u200b\ufeff\"}", `{"a":"\u202etxt.exe\u200b\ufeff"}`},
		{"{\"a\":\"id\U000E0041\"}", `{"a":"id\udb40\udc41"}`},
		{"{\"a\":\"one\u2028two\"}", `{"a":"one\u2028two"}`},
		{"{\n\t\"a\": 1\n}", "{\n\t\"a\": 1\n}"},
		{"not json \x1b]52;c;x\x07 \xff", `not json \u001b]52;c;x\u0007 \ufffd`},
	} {
		if got := string(JSON([]byte(c.in))); got != c.want {
			t.Errorf("JSON(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
