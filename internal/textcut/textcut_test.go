package textcut

import (
	"testing"
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
