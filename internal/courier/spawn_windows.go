//go:build windows

package courier

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// DefaultCredentialHandle is 0 on Windows: no handle, unless spawn names
// the one it handed over (CredentialFlag).
const DefaultCredentialHandle = 0

// CredentialWhere says where a worker looks for its credential, for the
// error a worker started by hand gets.
const CredentialWhere = "the inherited handle --" + CredentialFlag + " names"

// detachFlags make the worker a process of its own: no console (so neither
// Ctrl-C nor a closed console window reaches it: DETACHED_PROCESS), a
// process group of its own (CREATE_NEW_PROCESS_GROUP: no Ctrl-Break sent to
// the caller's group), and out of the caller's job (CREATE_BREAKAWAY_FROM_JOB:
// an assistant that ends its tool call's process tree through a job object,
// as Electron and Node-based runners do, does not end the worker).
const detachFlags = windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP

// startDetached starts the worker command detached (detachFlags), with the
// credential pipe's read end as the one handle it inherits besides its
// standard ones, and its value on the command line (--credential-handle N:
// an inherited handle has the same value in the child; a number, no
// secret). os/exec passes the child exactly those handles: stdin, stdout,
// stderr and SysProcAttr.AdditionalInheritedHandles, in a
// PROC_THREAD_ATTRIBUTE_HANDLE_LIST (syscall.StartProcess), so no other
// inheritable handle of this process reaches the worker, which is what
// markInheritedCloseOnExec does on Unix.
//
// A job without JOB_OBJECT_LIMIT_BREAKAWAY_OK refuses the breakaway:
// CreateProcess fails with ERROR_ACCESS_DENIED. The worker is then started
// without it, so it still starts, but stays in the caller's job and ends
// with it; the record keeps the task, and `result --wait` starts another
// worker, which reads the reply back without sending again. The note says
// so in the worker log.
func startDetached(command func(extra ...string) *exec.Cmd, cred *os.File) (*exec.Cmd, string, error) {
	start := func(flags uint32) (*exec.Cmd, error) {
		cmd := command("--"+CredentialFlag, strconv.FormatUint(uint64(cred.Fd()), 10))
		cmd.Dir = workerDir()
		cmd.SysProcAttr = &syscall.SysProcAttr{
			CreationFlags:              flags,
			AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(cred.Fd())},
		}
		return cmd, cmd.Start()
	}
	cmd, err := start(detachFlags | windows.CREATE_BREAKAWAY_FROM_JOB)
	if !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return cmd, "", err
	}
	cmd, err = start(detachFlags)
	return cmd, " (the caller's job refuses CREATE_BREAKAWAY_FROM_JOB: this worker stays in it and ends when the job does; `result --wait` starts another)", err
}

// workerDir is the worker's working directory: the root of the system
// drive, so that the worker, which lives for hours, keeps no directory of
// its caller's busy (Windows refuses to remove a process's current
// directory), as "/" does on Unix.
func workerDir() string {
	if dir, err := windows.GetSystemDirectory(); err == nil {
		if vol := filepath.VolumeName(dir); vol != "" {
			return vol + `\`
		}
	}
	return ""
}

// envName is an environment variable's name as Windows compares names:
// without case ("Path" is PATH).
func envName(name string) string { return strings.ToUpper(name) }

// platformVar reports whether a worker keeps a variable a Windows program
// needs (the system's folders, its temporary folder, the command
// interpreter's settings) or the user's profile folders, which give the
// config and state directories' defaults (%APPDATA%, %LOCALAPPDATA%) and
// what ~ means (%USERPROFILE%). upper is the name in capitals.
func platformVar(upper string) bool {
	switch upper {
	case "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "TEMP", "TMP", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
		"USERNAME", "PATHEXT", "COMSPEC":
		return true
	}
	return false
}
