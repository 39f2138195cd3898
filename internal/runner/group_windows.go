//go:build windows

package runner

import (
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// group is the job object a run's command is in, from its first
// instruction on (started suspended, assigned, then resumed): everything it
// starts is in the job, and ending the job ends them all.
type group struct{ job windows.Handle }

var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
}

func started(cmd *exec.Cmd) (*group, error) {
	j, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(j, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(j)
		return nil, fmt.Errorf("set the job's limits: %w", err)
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(j, ph)
		windows.CloseHandle(ph)
	}
	if err != nil {
		windows.CloseHandle(j)
		return nil, fmt.Errorf("put the command in its job: %w", err)
	}
	return &group{job: j}, nil
}

// resume lets the suspended command run.
func (g *group) resume(cmd *exec.Cmd) error {
	h, err := windows.OpenProcess(windows.PROCESS_SUSPEND_RESUME, false, uint32(cmd.Process.Pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := ntResumeProcess.Find(); err != nil {
		return err
	}
	if status, _, _ := ntResumeProcess.Call(uintptr(h)); status != 0 {
		return windows.NTStatus(status)
	}
	return nil
}

// stop ends the job: Windows has no polite signal for a console-less
// process tree.
func (g *group) stop() { g.kill() }

func (g *group) kill() { windows.TerminateJobObject(g.job, 1) }

func (g *group) close() { windows.CloseHandle(g.job) }

func (g *group) id() int { return 0 }

// KillGroup does nothing on Windows: the job (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)
// was ended with the server that held its handle.
func KillGroup(int) bool { return false }
