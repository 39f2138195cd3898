//go:build windows

package courier

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	kernel32              = windows.NewLazySystemDLL("kernel32.dll")
	getConsoleProcessList = kernel32.NewProc("GetConsoleProcessList")
	isProcessInJob        = kernel32.NewProc("IsProcessInJob")
)

// detached reports whether this process is attached to no console:
// GetConsoleProcessList, which lists the processes of the console this one
// is attached to, fails when there is none. A process attached to its
// caller's console gets that console's CTRL_C_EVENT and CTRL_CLOSE_EVENT
// (and is ended with the console window), as a Unix process in its caller's
// session gets SIGINT and SIGHUP.
func detached() bool {
	var pids [4]uint32
	n, _, _ := getConsoleProcessList.Call(uintptr(unsafe.Pointer(&pids[0])), uintptr(len(pids)))
	return n == 0
}

// inJob reports whether this process is in a job object: after a start
// with CREATE_BREAKAWAY_FROM_JOB, only when the caller's job refused it.
func inJob() bool {
	if isProcessInJob.Find() != nil {
		return false
	}
	var in int32
	ok, _, _ := isProcessInJob.Call(uintptr(windows.CurrentProcess()), 0, uintptr(unsafe.Pointer(&in)))
	return ok != 0 && in != 0
}

// stdinIsNull reports whether stdin is the NUL device: a character device
// that is no console (a console is one too, and GetConsoleMode succeeds on
// it).
func stdinIsNull() bool {
	h := windows.Handle(os.Stdin.Fd())
	t, err := windows.GetFileType(h)
	if err != nil || t != windows.FILE_TYPE_CHAR {
		return false
	}
	var mode uint32
	return windows.GetConsoleMode(h, &mode) != nil
}
