package store

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The refusals no retry mends are named as the state directory's; others
// (a missing file, a failing disk) are left as they are.
func TestUnwritableErrors(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The system's codes (unwritable_unix_test.go, unwritable_windows_test.go).
	for _, c := range unwritableCases {
		pe := &os.PathError{Op: "write", Path: filepath.Join(s.tasksDir(), "x.json"), Err: c.errno}
		err := s.unwritable(fmt.Errorf("write task record x: %w", pe))
		var ue *UnwritableError
		if errors.As(err, &ue) != c.unwritable {
			t.Errorf("%v: unwritable %v, want %v", c.errno, !c.unwritable, c.unwritable)
			continue
		}
		if !c.unwritable {
			continue
		}
		if ue.Dir != s.Dir() || ue.Full() != c.full || ue.ReadOnly() != c.readOnly || !errors.Is(err, c.errno) {
			t.Errorf("%v: %+v full %v read-only %v", c.errno, ue, ue.Full(), ue.ReadOnly())
		}
		want := "cannot write to the state directory " + s.Dir() + ": write task record x: write " + pe.Path + ": " + c.errno.Error()
		if err.Error() != want {
			t.Errorf("%q, want %q", err, want)
		}
		if again := s.unwritable(err); again != err {
			t.Errorf("wrapped twice: %v", again)
		}
	}
}

// A real refusal, as root too: an immutable tasks directory (chattr +i)
// refuses the record's lock and the record itself.
func TestWritesToAnImmutableStateDirectory(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", s.tasksDir()).CombinedOutput(); err != nil {
			t.Skipf("chattr +i is not available here: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", s.tasksDir()).Run() })
	} else {
		os.Chmod(s.tasksDir(), 0o500)
		t.Cleanup(func() { os.Chmod(s.tasksDir(), 0o700) })
	}
	var ue *UnwritableError
	if _, err := s.Lock("ctx-1"); !errors.As(err, &ue) || ue.Dir != s.Dir() {
		t.Errorf("Lock: %v", err)
	}
	if err := s.Create(newRecord("ctx-1")); !errors.As(err, &ue) || ue.Dir != s.Dir() {
		t.Errorf("Create: %v", err)
	}
	if err := s.RequestCancel("ctx-1", "m"); !errors.As(err, &ue) {
		t.Errorf("RequestCancel: %v", err)
	}
}
