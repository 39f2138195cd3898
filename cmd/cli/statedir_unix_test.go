//go:build !windows

package cli

import "syscall"

// stateDirCases: a state directory and, for each refusal, the hint.
func stateDirCases() (string, []struct {
	errno syscall.Errno
	hint  string
}) {
	return "/var/state/a2a courier", []struct {
		errno syscall.Errno
		hint  string
	}{
		{syscall.ENOSPC, "free space on the disk that holds it (df -h '/var/state/a2a courier'), or point A2A_COURIER_STATE_DIR at a directory on a disk with room"},
		{syscall.EDQUOT, "free space on the disk that holds it (df -h '/var/state/a2a courier'), or point A2A_COURIER_STATE_DIR at a directory on a disk with room"},
		{syscall.EROFS, "its file system is read-only: point A2A_COURIER_STATE_DIR at a writable directory"},
		{syscall.EACCES, "check that this user owns it and may write in it (ls -ld '/var/state/a2a courier'), or point A2A_COURIER_STATE_DIR at a directory it can write"},
	}
}

// otherFSError is a failure of the file system that is not the set-up's.
var otherFSError = syscall.EIO
