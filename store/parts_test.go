package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSafeFileName(t *testing.T) {
	long := strings.Repeat("é", 150) + ".csv"
	for in, want := range map[string]string{
		"report.pdf":         "report.pdf",
		"../../etc/passwd":   "passwd",
		`C:\Users\me\a.txt`:  "a.txt",
		".bashrc":            "bashrc",
		"..":                 "file",
		"":                   "file",
		"a\x00b\nc.txt":      "a_b_c.txt",
		"  spaced name.md  ": "spaced name.md",
		"dir/":               "file",
		"bad\xffutf8.bin":    "bad_utf8.bin",
		long:                 strings.Repeat("é", 98) + ".csv",
	} {
		if got := SafeFileName(in); got != want {
			t.Errorf("SafeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// SaveFile never writes over a file: a name taken gets -2, -3, …; each
// file is whole and private.
func TestSaveFileNeverOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	var paths []string
	for i, content := range []string{"one", "two", "three"} {
		p, err := SaveFile(dir, "../notes.txt", []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(dir, []string{"notes.txt", "notes-2.txt", "notes-3.txt"}[i])
		if p != want {
			t.Errorf("saved to %s, want %s", p, want)
		}
		paths = append(paths, p)
	}
	for i, p := range paths {
		b, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if err != nil || string(b) != []string{"one", "two", "three"}[i] || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %q %v %v", p, b, err, fi.Mode())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
