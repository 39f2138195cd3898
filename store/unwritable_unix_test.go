//go:build !windows

package store

import "syscall"

var unwritableCases = []struct {
	errno          syscall.Errno
	unwritable     bool
	full, readOnly bool
}{
	{syscall.ENOSPC, true, true, false},
	{syscall.EDQUOT, true, true, false},
	{syscall.EFBIG, true, true, false},
	{syscall.EROFS, true, false, true},
	{syscall.EACCES, true, false, false},
	{syscall.EPERM, true, false, false},
	{syscall.ENOENT, false, false, false},
	{syscall.EIO, false, false, false},
}
