//go:build !windows

package store

import "syscall"

// The refusals of a write no retry mends, as Unix names them. EFBIG is a
// file-size limit (ulimit -f); EPERM, for root, an immutable directory
// (chattr +i).
var (
	fullErrnos     = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG}
	readOnlyErrnos = []syscall.Errno{syscall.EROFS}
	deniedErrnos   = []syscall.Errno{syscall.EACCES, syscall.EPERM}
)
