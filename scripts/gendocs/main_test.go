package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedDocsAreCurrent fails when the command reference or the man
// pages in docs/ differ from what the command tree generates.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	md, man := filepath.Join(tmp, "reference"), filepath.Join(tmp, "man")
	if err := generateDocs(md, man); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{md, "../../docs/reference"}, {man, "../../docs/man"}} {
		want, _ := os.ReadDir(pair[0])
		have, _ := os.ReadDir(pair[1])
		if len(want) != len(have) {
			t.Errorf("%s has %d files, the command tree gives %d: run go run ./scripts/gendocs", pair[1], len(have), len(want))
		}
		for _, f := range want {
			a, _ := os.ReadFile(filepath.Join(pair[0], f.Name()))
			b, err := os.ReadFile(filepath.Join(pair[1], f.Name()))
			if err != nil || string(a) != string(b) {
				t.Errorf("%s/%s is stale: run go run ./scripts/gendocs", pair[1], f.Name())
			}
		}
	}
}
