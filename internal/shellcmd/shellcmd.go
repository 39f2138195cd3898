// Package shellcmd writes the command lines a2a-courier prints for its
// caller to run next: values quoted for a POSIX shell, and the flags of
// the caller's own command line carried into them.
package shellcmd

import (
	"regexp"
	"strings"
)

// Quote makes a value safe to paste into a POSIX shell: commands in
// documents are run by assistants as they are.
func Quote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@%+=,~", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// named says the command line names the flag.
func named(line, flag string) bool {
	return strings.Contains(line+" ", " "+flag+" ") || strings.Contains(line, " "+flag+"=")
}

// Flag is a flag and its value.
type Flag struct{ Name, Value string }

// reachesServer finds, in a text, a command that reaches a server: the
// ones that take the connection flags (--profile, --kibana-url, …).
var reachesServer = regexp.MustCompile(`a2a-courier (send-async|send|result|fetch|show|cancel|get-card|discover|history|tasks|doctor)\b`)

// WithFlags puts flags after the name of each command in s that reaches
// a server ("a2a-courier fetch X" → "a2a-courier fetch --profile lab X"),
// but for one a command names already, and none in a command that names
// its own --kibana-url (a hint that points at another Kibana: the
// caller's profile, space and key are for the caller's). A command runs
// to the closing backtick, a ";", the next command or the line's end; a
// name not followed by a space, a backtick or the end ("send's") is prose.
func WithFlags(s string, flags []Flag) string {
	if len(flags) == 0 || !strings.Contains(s, "a2a-courier ") {
		return s
	}
	var b strings.Builder
	for {
		loc := reachesServer.FindStringIndex(s)
		if loc == nil {
			return b.String() + s
		}
		b.WriteString(s[:loc[1]])
		s = s[loc[1]:]
		if s != "" && !strings.ContainsRune(" `\n", rune(s[0])) {
			continue
		}
		line := s
		if i := strings.IndexAny(line, "`\n;"); i >= 0 {
			line = line[:i]
		}
		if i := strings.Index(line, "a2a-courier "); i >= 0 {
			line = line[:i]
		}
		if named(line, "--kibana-url") {
			continue
		}
		for _, f := range flags {
			if !named(line, f.Name) {
				b.WriteString(" " + f.Name + " " + Quote(f.Value))
			}
		}
	}
}
