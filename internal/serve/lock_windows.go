//go:build windows

package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// lockDir takes the state directory's lock, or says another serve has it.
func lockDir(path string) (func(), error) {
	f, err := ownfile.OpenFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, &UsageError{Msg: "another serve is using the state directory " + filepath.Dir(path), Hint: "stop it, or give this one its own --state-dir"}
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return func() { windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol); f.Close() }, nil
}
