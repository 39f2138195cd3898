package oshint

import (
	"syscall"

	"golang.org/x/sys/windows"
)

var hintCases = []struct {
	dir   string
	errno syscall.Errno
	hint  string
}{
	{`C:\Users\Zoë\AppData\Local\a2a-courier\state`, windows.ERROR_DISK_FULL,
		"free space on drive C: (Get-PSDrive C in PowerShell, or the drive's Properties in Explorer), or point A2A_COURIER_STATE_DIR at a folder on a drive with room"},
	{`d:\state`, windows.ERROR_HANDLE_DISK_FULL,
		"free space on drive D: (Get-PSDrive D in PowerShell, or the drive's Properties in Explorer), or point A2A_COURIER_STATE_DIR at a folder on a drive with room"},
	{`\\files\home\ada\state`, windows.ERROR_DISK_QUOTA_EXCEEDED,
		`free space on \\files\home, or point A2A_COURIER_STATE_DIR at a folder on a drive with room`},
	{`E:\state`, windows.ERROR_WRITE_PROTECT, "its drive is write-protected: point A2A_COURIER_STATE_DIR at a writable folder"},
	{`C:\Program Files\a2a courier\state`, windows.ERROR_ACCESS_DENIED,
		`check that this user may write in it (icacls "C:\Program Files\a2a courier\state", or the folder's Properties, Security tab), or point A2A_COURIER_STATE_DIR at a folder it can write`},
	{`C:\state`, windows.ERROR_ACCESS_DENIED,
		`check that this user may write in it (icacls C:\state, or the folder's Properties, Security tab), or point A2A_COURIER_STATE_DIR at a folder it can write`},
}

// foreign: Unix's commands, which a Windows user does not have.
var foreign = []string{"df -h", "ls -ld", "kill -", "kill 4242", "chmod", "chattr", "SIGCONT", "ulimit"}
