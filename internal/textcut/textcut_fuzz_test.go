package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzPrefix(f *testing.F) {
	f.Add("aé€😀", 5)
	f.Add("\xff\x80abc", 2)
	f.Fuzz(func(t *testing.T, s string, max int) {
		got := Prefix(s, max)
		if !strings.HasPrefix(s, got) {
			t.Fatalf("Prefix(%q, %d) = %q: not a prefix", s, max, got)
		}
		if len(s) <= max && got != s {
			t.Fatalf("Prefix(%q, %d) = %q: s fits and was cut", s, max, got)
		}
		if len(s) > max && len(got) > max && len(got) > 0 {
			t.Fatalf("Prefix(%q, %d) = %q: longer than max", s, max, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Prefix(%q, %d) = %q: split a character", s, max, got)
		}
		// Longest: the next character boundary after got lies past max.
		if len(got) < len(s) && max > 0 {
			next := len(got) + 1
			for next < len(s) && !utf8.RuneStart(s[next]) {
				next++
			}
			if next <= max {
				t.Fatalf("Prefix(%q, %d) = %q: a longer start (%d bytes) fits", s, max, got, next)
			}
		}
	})
}
