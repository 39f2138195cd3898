// Package shellcmd quotes the values of the command lines a2a-courier
// prints for its caller to run next (internal/nextstep), for a POSIX
// shell.
package shellcmd

import "strings"

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
