package store

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows' codes; Go's own syscall.ENOSPC and EROFS, which no Windows call
// returns, are not among them.
var unwritableCases = []struct {
	errno          syscall.Errno
	unwritable     bool
	full, readOnly bool
}{
	{windows.ERROR_DISK_FULL, true, true, false},
	{windows.ERROR_HANDLE_DISK_FULL, true, true, false},
	{windows.ERROR_DISK_QUOTA_EXCEEDED, true, true, false},
	{windows.ERROR_FILE_TOO_LARGE, true, true, false},
	{windows.ERROR_WRITE_PROTECT, true, false, true},
	{windows.ERROR_ACCESS_DENIED, true, false, false},
	{windows.ERROR_SHARING_VIOLATION, false, false, false},
	{windows.ERROR_FILE_NOT_FOUND, false, false, false},
	{windows.ERROR_CRC, false, false, false},
}
