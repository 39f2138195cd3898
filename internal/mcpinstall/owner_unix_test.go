//go:build unix

package mcpinstall

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInstallKeepsTheOwner: root (these tests run as root) editing another
// user's file leaves it that user's, with its mode; a file with two hard
// links is refused, dry run or not, and both names keep their content.
func TestInstallKeepsTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the file of another user")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, []byte(existing[Cursor]), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(path, Cursor, entry, false); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	st := fi.Sys().(*syscall.Stat_t)
	if b, _ := os.ReadFile(path); st.Uid != 1234 || st.Gid != 5678 || fi.Mode().Perm() != 0o640 || !strings.Contains(string(b), `"command": "/usr/local/bin/a2a-courier"`) {
		t.Errorf("owner %d:%d, mode %v\n%s", st.Uid, st.Gid, fi.Mode(), b)
	}

	other := filepath.Join(dir, "link.json")
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	changed := entry
	changed.Command = "/opt/a2a-courier"
	for _, dry := range []bool{true, false} {
		_, err := Install(path, Cursor, changed, dry)
		if err == nil || !strings.HasPrefix(err.Error(), "the file has 2 hard links, which writing a new version would split") {
			t.Errorf("hard links (dry run %v): %v", dry, err)
		}
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(other)
	if !bytes.Equal(a, before) || !bytes.Equal(b, before) {
		t.Errorf("a linked file changed:\n%s\n%s", a, b)
	}
	// Unchanged needs no write: a linked file that already has the entry
	// is fine.
	if res, err := Install(path, Cursor, entry, false); err != nil || res.Changed {
		t.Errorf("unchanged, linked: %v %+v", err, res)
	}
}
