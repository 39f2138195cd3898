package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte a task's lock takes: far past the end of any lock
// file (which holds a process id). Windows' byte-range locks are
// mandatory: while one handle holds a range, other handles can neither
// read nor write it. A lock on the first bytes would make LockHolder's
// read of the holder's id fail; one this far out is in no one's way.
// (Wine does not enforce the ranges, so only Windows shows that this
// matters: docs/windows.md.)
const lockOffset = 1 << 62

func lockRange() *windows.Overlapped {
	return &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
}

// lockFile takes an exclusive lock of one byte at lockOffset without
// waiting: ErrLocked when another handle (this process's or another's)
// holds it. The system frees it when the handle closes or the process
// ends, however it ends.
func lockFile(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, lockRange())
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return ErrLocked
	}
	return err
}

func unlockFile(f *os.File) { windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockRange()) }
