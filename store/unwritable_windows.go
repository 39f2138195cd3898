package store

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// The refusals of a write no retry mends, as Windows names them. Go's
// syscall.ENOSPC, EROFS and EACCES are numbers of its own there, which no
// Windows call returns.
//
// ERROR_ACCESS_DENIED is also what Windows answers for a rename over a file
// another process holds open without FILE_SHARE_DELETE, which passes once
// that process closes it: the store retries those where it renames, so the
// error that reaches here is one the retries did not mend.
var (
	// the disk, a quota, or a file-size limit
	fullErrnos = []syscall.Errno{windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL, windows.ERROR_DISK_QUOTA_EXCEEDED,
		windows.ERROR_FILE_TOO_LARGE}
	// a write-protected medium
	readOnlyErrnos = []syscall.Errno{windows.ERROR_WRITE_PROTECT}
	// the folder's ACL (or a file's read-only attribute) denies this user
	deniedErrnos = []syscall.Errno{windows.ERROR_ACCESS_DENIED}
)
