package config

import (
	"regexp"
	"strconv"
	"strings"
)

// bareNumber is a positive number written without a unit: "90", "1.5".
var bareNumber = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// DurationHint is the hint for a value given where a positive duration is
// wanted (a flag, a variable, the config file, config set) that is none.
// A bare number is the usual slip: its hint starts "did you mean 90s?".
func DurationHint(value string) string {
	if n, ok := unitless(value); ok {
		return "did you mean " + n + "s? a duration takes a unit: ms, s, m or h (90s, 5m, 1h30m)"
	}
	return "use a positive duration with a unit: ms, s, m or h (90s, 5m, 1h30m)"
}

// AgeHint is DurationHint for an age (prune --older-than), which also
// takes days and weeks: a bare number is taken for days.
func AgeHint(value string) string {
	if n, ok := unitless(value); ok {
		return "did you mean " + n + "d? an age takes a unit: d or w (30d, 2w), or a duration's (12h, 90m)"
	}
	return "use days (30d), weeks (2w) or a duration such as 12h or 90m"
}

// unitless reports whether value is a positive number without a unit, and
// gives it trimmed.
func unitless(value string) (string, bool) {
	v := strings.TrimSpace(value)
	if !bareNumber.MatchString(v) {
		return "", false
	}
	f, err := strconv.ParseFloat(v, 64)
	return v, err == nil && f > 0
}
