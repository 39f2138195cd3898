//go:build windows

package proctest

import (
	"fmt"

	"golang.org/x/sys/windows"
)

var (
	ntdll            = windows.NewLazySystemDLL("ntdll.dll")
	ntSuspendProcess = ntdll.NewProc("NtSuspendProcess")
	ntResumeProcess  = ntdll.NewProc("NtResumeProcess")
)

// Kill ends the process at once (TerminateProcess, exit code 1), and waits
// until it has gone: its handles, the files it held open among them, are
// closed once it has.
func Kill(pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.TerminateProcess(h, 1); err != nil {
		return fmt.Errorf("terminate process %d: %w", pid, err)
	}
	if _, err := windows.WaitForSingleObject(h, 30_000); err != nil {
		return fmt.Errorf("wait for process %d: %w", pid, err)
	}
	return nil
}

// Stop suspends every thread of the process (NtSuspendProcess, what
// Resource Monitor's "Suspend process" does): alive, holding what it
// holds, doing nothing, until Continue.
func Stop(pid int) error { return suspendResume(pid, ntSuspendProcess) }

// Continue resumes a suspended process (NtResumeProcess).
func Continue(pid int) error { return suspendResume(pid, ntResumeProcess) }

func suspendResume(pid int, proc *windows.LazyProc) error {
	h, err := windows.OpenProcess(windows.PROCESS_SUSPEND_RESUME, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if err := proc.Find(); err != nil {
		return err
	}
	if status, _, _ := proc.Call(uintptr(h)); status != 0 {
		return fmt.Errorf("%s of process %d: %w", proc.Name, pid, windows.NTStatus(status))
	}
	return nil
}

// Alive reports whether the process runs: it can be opened and has not
// exited.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}
