package configfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
)

// config set writes the config file private, in a private directory it
// makes when missing (0600 in 0700; owner-only ACLs on Windows), and a
// file others could read is private once a change rewrites it.
func TestApplyWritesPrivately(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a2a-courier")
	path := filepath.Join(dir, "config.yaml")
	getenv := func(string) string { return "" }
	if _, err := Apply(Change{Path: path, Getenv: getenv, Name: "kibana-url", Value: "https://kb.example.com"}); err != nil {
		t.Fatal(err)
	}
	if p := ownfiletest.DirProblem(dir); p != "" {
		t.Errorf("config directory: %s", p)
	}
	if p := ownfiletest.FileProblem(path); p != "" {
		t.Errorf("config file: %s", p)
	}
	if err := ownfiletest.Expose(path); err != nil {
		t.Fatal(err)
	}
	if ownfiletest.FileProblem(path) == "" {
		t.Fatal("exposed, the file is still private")
	}
	if _, err := Apply(Change{Path: path, Getenv: getenv, Name: "api-key", Value: "c2VjcmV0OmtleQ=="}); err != nil {
		t.Fatal(err)
	}
	if p := ownfiletest.FileProblem(path); p != "" {
		t.Errorf("rewritten with the key: %s", p)
	}
	if b, _ := os.ReadFile(path); len(b) == 0 {
		t.Error("nothing written")
	}
}
