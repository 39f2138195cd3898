//go:build !unix

// Package fifotest makes named pipes (FIFOs) for tests, on the systems that
// have them; tests of what refuses a FIFO call it instead of
// syscall.Mkfifo so that their packages still build, and their other tests
// still run, for Windows (see docs/windows.md).
package fifotest

import (
	"errors"
	"fmt"
	"runtime"
)

// Make fails: this system has no FIFOs in its file system (Windows' named
// pipes live under \\.\pipe\, not at a path of one's choosing).
func Make(path string) error {
	return fmt.Errorf("make a FIFO at %s: %w: %s has no FIFOs", path, errors.ErrUnsupported, runtime.GOOS)
}
