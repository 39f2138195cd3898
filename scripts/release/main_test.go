package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	want := map[string]string{
		"linux/amd64":   "a2a-courier_v1.2.3_linux_amd64",
		"linux/arm64":   "a2a-courier_v1.2.3_linux_arm64",
		"darwin/amd64":  "a2a-courier_v1.2.3_darwin_amd64",
		"darwin/arm64":  "a2a-courier_v1.2.3_darwin_arm64",
		"windows/amd64": "a2a-courier_v1.2.3_windows_amd64.exe",
		"windows/arm64": "a2a-courier_v1.2.3_windows_arm64.exe",
	}
	if len(Targets) != len(want) {
		t.Fatalf("%d targets, want %d", len(Targets), len(want))
	}
	for _, target := range Targets {
		if got := Name("v1.2.3", target); got != want[target] {
			t.Errorf("%s: %s, want %s", target, got, want[target])
		}
	}
}

func TestVersions(t *testing.T) {
	commit := "e926defc4e14ff258e5075fdbe0e687bc7f7b813"
	for _, c := range []struct {
		tag   string
		dirty bool
		want  string
	}{{"", false, "dev-e926defc4e14"}, {"", true, "dev-e926defc4e14-dirty"}, {"v0.4.0", false, "v0.4.0"}, {"v0.4.0", true, "v0.4.0-dirty"}} {
		if got := defaultVersion(commit, c.tag, c.dirty); got != c.want {
			t.Errorf("%q %v: %s, want %s", c.tag, c.dirty, got, c.want)
		}
	}
	for _, v := range []string{"v1.2.3", "1.0.0-rc.1", "v2+build.5", "dev-e926defc4e14-dirty"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"", "../x", "v1 2", "v1/2", "-v1", "v1;rm", strings.Repeat("9", 65)} {
		if checkVersion(v) == nil {
			t.Errorf("%q accepted", v)
		}
	}
	if err := run("v1", t.TempDir(), []string{"plan9/amd64"}, true, nil); err == nil || !strings.Contains(err.Error(), "unknown target") {
		t.Errorf("an unknown target: %v", err)
	}
}

// SHA256SUMS is sha256sum's format: "<64 hex>  <name>\n", sorted by name,
// each sum the file's.
func TestSums(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a2a-courier_v1_windows_amd64.exe": "MZ...", "a2a-courier_v1_linux_amd64": "\x7fELF..."}
	for name, content := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	b, err := Sums(dir, []string{"a2a-courier_v1_windows_amd64.exe", "a2a-courier_v1_linux_amd64"})
	if err != nil {
		t.Fatal(err)
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := sum("\x7fELF...") + "  a2a-courier_v1_linux_amd64\n" + sum("MZ...") + "  a2a-courier_v1_windows_amd64.exe\n"
	if string(b) != want {
		t.Errorf("%q\nwant %q", b, want)
	}
}

// A second run leaves no binary of the first behind, and keeps what else
// the folder holds.
func TestCleanRemovesOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a2a-courier_old_linux_amd64", SumsFile, "notes.txt"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	if err := clean(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Errorf("%v", entries)
	}
}
