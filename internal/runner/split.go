package runner

import (
	"errors"
	"runtime"
	"strings"
)

// Split splits a command line into its words the way a POSIX shell splits
// a simple command, with no expansion of any kind: words are separated by
// blanks; 'single quotes' keep everything; "double quotes" keep everything
// but \" and \\; a backslash outside quotes keeps the next character. No
// variable, glob, pipe or redirection means anything: a '|' is a word.
// Bytes are kept as they are, UTF-8 or not.
func Split(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	escaped := false
	// Byte by byte: every character that means something is ASCII, and a
	// word that is not UTF-8 is kept as it is (a range over runes would
	// make each bad byte U+FFFD).
	for i := 0; i < len(line); i++ {
		r := line[i]
		switch {
		case escaped:
			cur.WriteByte(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteByte(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteByte(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("the command line has an unclosed quote")
	}
	if escaped {
		return nil, errors.New("the command line ends with a backslash")
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("the command line is empty")
	}
	return words, nil
}

// ShellArgv is the argv that runs line with the system's shell: sh -c on
// Unix, cmd /C on Windows. Only --shell asks for it.
func ShellArgv(line string) []string {
	if runtime.GOOS == "windows" {
		return []string{"cmd", "/C", line}
	}
	return []string{"/bin/sh", "-c", line}
}
