package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"aé", 2, "a"},                 // é is 2 bytes: not split
		{"aé", 3, "aé"},                // fits
		{"€€", 4, "€"},                 // € is 3 bytes
		{"€€", 5, "€"},                 // still not split
		{"€€", 6, "€€"},                // fits
		{"😀x", 3, ""},                  // a 4-byte character longer than max
		{"a\x80\x80b", 3, "a\x80\x80"}, // continuation bytes stay with what precedes them
	} {
		if got := Prefix(c.s, c.max); got != c.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}

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
