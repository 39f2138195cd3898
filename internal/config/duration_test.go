package config

import (
	"strings"
	"testing"
	"time"
)

// A bare positive number gets its unit suggested, and the suggestion is a
// duration that parses to that many seconds; anything else gets the
// general hint.
func TestDurationHint(t *testing.T) {
	for _, v := range []string{"90", " 90 ", "1.5", ".5", "7200", "007"} {
		h := DurationHint(v)
		n := strings.TrimSpace(v)
		if !strings.HasPrefix(h, "did you mean "+n+"s?") {
			t.Errorf("%q: %q", v, h)
			continue
		}
		d, err := time.ParseDuration(n + "s")
		if err != nil || d <= 0 {
			t.Errorf("%q: the suggestion %ss does not parse: %v", v, n, err)
		}
		if !strings.HasPrefix(AgeHint(v), "did you mean "+n+"d?") {
			t.Errorf("age %q: %q", v, AgeHint(v))
		}
	}
	for _, v := range []string{"0", "-5", "0.0", "soon", "90x", "1e3", "", "1h5", "+5", "٣"} {
		if h := DurationHint(v); strings.Contains(h, "did you mean") {
			t.Errorf("%q: %q", v, h)
		}
		if h := AgeHint(v); strings.Contains(h, "did you mean") {
			t.Errorf("age %q: %q", v, h)
		}
	}
}
