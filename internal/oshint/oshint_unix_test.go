//go:build !windows

package oshint

import "syscall"

var hintCases = []struct {
	dir   string
	errno syscall.Errno
	hint  string
}{
	{"/var/state/a2a courier", syscall.ENOSPC, "free space on the disk that holds it (df -h '/var/state/a2a courier'), or point A2A_COURIER_STATE_DIR at a directory on a disk with room"},
	{"/s", syscall.EROFS, "its file system is read-only: point A2A_COURIER_STATE_DIR at a writable directory"},
	{"/s", syscall.EACCES, "check that this user owns it and may write in it (ls -ld /s), or point A2A_COURIER_STATE_DIR at a directory it can write"},
}

// foreign: words of Windows' hints.
var foreign = []string{"icacls", "taskkill", "Resource Monitor", "Explorer", "PowerShell"}
