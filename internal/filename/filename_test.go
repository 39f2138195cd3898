package filename

import "testing"

// On Windows a name is also one Windows takes as it is: not refused
// (<>|?*"), not an alternate data stream (":"), not a device (CON, NUL,
// COM1, with or without an extension), not shortened by Windows (trailing
// dots and spaces). Elsewhere such names are kept.
func TestSafeOnWindows(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":       "report.pdf",
		"a:b.txt":          "a_b.txt",
		"notes.txt:hidden": "notes.txt_hidden",
		`what?<x>|"y"*.md`: "what__x___y__.md",
		"CON":              "_CON",
		"nul.txt":          "_nul.txt",
		"Com1.tar.gz":      "_Com1.tar.gz",
		"lpt9":             "_lpt9",
		"COM¹.log":         "_COM¹.log",
		"aux .txt":         "_aux .txt",
		"CONSOLE.txt":      "CONSOLE.txt",
		"com10.txt":        "com10.txt",
		"report.":          "report",
		"report. . ":       "report",
		"...":              "file",
		"draft .":          "draft",
	} {
		if got := safe(in, true); got != want {
			t.Errorf("windows: safe(%q) = %q, want %q", in, got, want)
		}
	}
	for _, keep := range []string{"a:b.txt", "nul.txt", "CON", `what?.md`} {
		if got := safe(keep, false); got != keep {
			t.Errorf("unix: safe(%q) = %q", keep, got)
		}
	}
}
