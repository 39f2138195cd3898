//go:build unix

// Package fifotest makes named pipes (FIFOs) for tests, on the systems that
// have them; tests of what refuses a FIFO call it instead of
// syscall.Mkfifo so that their packages still build, and their other tests
// still run, for Windows (see docs/windows.md).
package fifotest

import "syscall"

// Make creates a FIFO at path, mode 0600.
func Make(path string) error { return syscall.Mkfifo(path, 0o600) }
