package cli

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// stateDirCases: a state directory and, for each refusal, the hint, in
// Windows' terms.
func stateDirCases() (string, []struct {
	errno syscall.Errno
	hint  string
}) {
	return `C:\ProgramData\a2a courier`, []struct {
		errno syscall.Errno
		hint  string
	}{
		{windows.ERROR_DISK_FULL, "free space on drive C: (Get-PSDrive C in PowerShell, or the drive's Properties in Explorer), or point A2A_COURIER_STATE_DIR at a folder on a drive with room"},
		{windows.ERROR_DISK_QUOTA_EXCEEDED, "free space on drive C: (Get-PSDrive C in PowerShell, or the drive's Properties in Explorer), or point A2A_COURIER_STATE_DIR at a folder on a drive with room"},
		{windows.ERROR_WRITE_PROTECT, "its drive is write-protected: point A2A_COURIER_STATE_DIR at a writable folder"},
		{windows.ERROR_ACCESS_DENIED, `check that this user may write in it (icacls "C:\ProgramData\a2a courier", or the folder's Properties, Security tab), or point A2A_COURIER_STATE_DIR at a folder it can write`},
	}
}

// otherFSError is a failure of the file system that is not the set-up's.
var otherFSError = windows.ERROR_CRC
