package mcpinstall

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On Windows a file another program holds open (without sharing its
// deletion, as os.Open and most programs open) cannot be renamed over:
// the new version waits for it to be closed (ownfile.Rename), and when it
// is not, the error says which file and is a ReplaceError, which the
// command turns into "close <assistant> and run again".
func TestInstallWaitsForAFileHeldOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if _, err := Install(path, Cursor, entry, false); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond) // a program closing it soon
		held.Close()
		close(released)
	}()
	other := entry
	other.Args = []string{"mcp", "--profile", "lab"}
	if _, err := Install(path, Cursor, other, false); err != nil {
		t.Fatalf("a file held open for a moment: %v", err)
	}
	<-released
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"lab"`) {
		t.Errorf("the new version is not in place:\n%s", b)
	}

	held, err = os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = Install(path, Cursor, entry, false)
	var re *ReplaceError
	if !errors.As(err, &re) || re.Target != Cursor {
		t.Fatalf("a file held open throughout: %v (%T)", err, err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"lab"`) {
		t.Errorf("the old version is not left whole:\n%s", b)
	}
}
