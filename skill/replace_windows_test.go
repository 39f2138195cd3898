package skill

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// On Windows a SKILL.md another program holds open cannot be renamed
// over: the new version waits for it to be closed (ownfile.Rename), and
// when it is not, the error is a ReplaceError, which the command turns
// into "close it and run again".
func TestInstallWaitsForAFileHeldOpen(t *testing.T) {
	dir := t.TempDir()
	path, _, err := Install(dir, `C:\one\a2a-courier.exe`, false)
	if err != nil {
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
	if _, action, err := Install(dir, `C:\two\a2a-courier.exe`, false); err != nil || action != Updated {
		t.Fatalf("a file held open for a moment: %v %s", err, action)
	}
	<-released
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `C:\two\`) {
		t.Errorf("the new version is not in place")
	}

	held, err = os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, _, err = Install(dir, `C:\three\a2a-courier.exe`, false)
	var re *ReplaceError
	if !errors.As(err, &re) {
		t.Fatalf("a file held open throughout: %v (%T)", err, err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `C:\two\`) {
		t.Errorf("the old version is not left whole")
	}
}
