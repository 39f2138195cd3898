// Package filename makes a name another party gave a file (an agent's
// part, a caller's file) fit to name a file here: the store saves replies'
// files by it, serve's runner writes a message's files by it.
package filename

import (
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a2a-courier/a2a-courier/internal/textcut"
)

// maxFileName bounds a saved file's name, in bytes (file systems allow
// 255; room is left for "-NNN", a digest and the temporary name's
// affixes).
const maxFileName = 200

// Safe makes a name an agent gave a file fit to name a file: its
// last path element only, control characters, line separators and path
// separators replaced, format characters (Unicode's Cf: the bidirectional
// controls, which would show "\u202etxt.exe" as "exe.txt", zero-width
// ones) dropped, no leading dot (no hidden file, no "." or ".."), at most
// maxFileName bytes with its extension kept; "file" when nothing is left.
// On Windows also what it refuses or reads otherwise in a name (windowsName).
func Safe(name string) string { return safe(name, runtime.GOOS == "windows") }

// safe is Safe for Windows when windows is set.
func safe(name string, windows bool) string {
	name = strings.ReplaceAll(name, `\`, "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError || unicode.IsControl(r) || r == '/' || r == '\u2028' || r == '\u2029':
			return '_'
		case unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, strings.TrimSpace(name))
	name = strings.TrimLeft(name, ". ")
	if name == "" {
		return "file"
	}
	if len(name) > maxFileName {
		ext := filepath.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		name = textcut.Prefix(name, maxFileName-len(ext)) + ext
	}
	if windows {
		name = windowsName(name)
	}
	return name
}

// windowsName is a name Windows takes as it is: its characters <>:"|?*
// replaced (":" would name an alternate data stream of the file before
// it, the others are refused), trailing dots and spaces dropped (Windows
// drops them itself, so that "report." would be "report", the name of
// another file), and a device's name (CON, PRN, AUX, NUL, COM0-9, LPT0-9,
// with any extension: "nul.txt" opens the NUL device) prefixed with "_".
func windowsName(name string) string {
	name = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`<>:"|?*`, r) {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimRight(name, ". ")
	if name == "" {
		return "file"
	}
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch {
	case stem == "CON" || stem == "PRN" || stem == "AUX" || stem == "NUL" || stem == "CONIN$" || stem == "CONOUT$":
		return "_" + name
	case len(stem) == 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) && strings.ContainsRune("0123456789", rune(stem[3])),
		(strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) && strings.ContainsAny(stem[3:], "¹²³") && utf8.RuneCountInString(stem) == 4:
		return "_" + name
	}
	return name
}
