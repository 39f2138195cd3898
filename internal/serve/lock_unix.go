//go:build unix

package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// lockDir takes the state directory's lock, or says another serve has it.
func lockDir(path string) (func(), error) {
	f, err := ownfile.OpenFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &UsageError{Msg: "another serve is using the state directory " + filepath.Dir(path), Hint: "stop it, or give this one its own --state-dir"}
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
