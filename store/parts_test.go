package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
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
		// Format characters (bidi controls: "\u202etxt.exe" shows as
		// "exe.txt"; zero-width ones) go; line separators are replaced.
		"\u202etxt.exe":                  "txt.exe",
		"a\u2066b\u2069\u200e\u200f.pdf": "ab.pdf",
		"\u061cx\u200b\ufeff.sh":         "x.sh",
		"\u202e.bashrc":                  "bashrc",
		"one\u2028two":                   "one_two",
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
		if err != nil || string(b) != []string{"one", "two", "three"}[i] {
			t.Errorf("%s: %q %v", p, b, err)
		}
		if problem := ownfiletest.FileProblem(p); problem != "" {
			t.Errorf("%s: %s", p, problem)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// SaveFile of a content already saved under that name (or its -N) returns
// that file and writes nothing; a link holding the content is not taken
// for it.
func TestSaveFileKeepsWhatIsSavedAlready(t *testing.T) {
	dir := t.TempDir()
	first, _ := SaveFile(dir, "a.txt", []byte("one"))
	second, _ := SaveFile(dir, "a.txt", []byte("two"))
	for content, want := range map[string]string{"one": first, "two": second} {
		if p, err := SaveFile(dir, "a.txt", []byte(content)); err != nil || p != want {
			t.Errorf("%q saved again: %s %v, want %s", content, p, err, want)
		}
	}
	elsewhere := filepath.Join(t.TempDir(), "b.txt")
	os.WriteFile(elsewhere, []byte("three"), 0o600)
	if why := makeSymlink(elsewhere, filepath.Join(dir, "b.txt")); why != "" {
		t.Skip("the case of a link: " + why)
	}
	if p, err := SaveFile(dir, "b.txt", []byte("three")); err != nil || p != filepath.Join(dir, "b-2.txt") {
		t.Errorf("the link was taken for the file: %s %v", p, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("%d entries, want a.txt, a-2.txt, b.txt and b-2.txt", len(entries))
	}
}

// TestHoldsFollowsNoLinkPutInPlace: whether a file of a saved name holds
// the content already is read from that file itself, never through a link
// put in its place after the look (nor from a FIFO: the open does not
// wait). A goroutine swaps, by rename, a regular file of the same size
// but other content and a link to a file that holds the content: holds
// must never say yes, as it did when it read with os.ReadFile after
// os.Lstat.
func TestHoldsFollowsNoLinkPutInPlace(t *testing.T) {
	dir := t.TempDir()
	content := []byte("the reply's file")
	target := filepath.Join(dir, "outside")
	if err := os.WriteFile(target, content, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "report.txt")
	regular, link := filepath.Join(dir, "regular"), filepath.Join(dir, "link")
	other := []byte(strings.Repeat("x", len(content)))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				_ = os.WriteFile(regular, other, 0o600)
				_ = os.Rename(regular, path)
			} else {
				_ = os.Symlink(target, link)
				_ = os.Rename(link, path)
			}
		}
	}()
	yes := 0
	for i := 0; i < 20000 && yes == 0; i++ {
		if holds(path, content) {
			yes++
		}
	}
	close(stop)
	<-done
	if yes != 0 {
		t.Fatalf("holds read the content through a link put in place of %s", path)
	}
}
