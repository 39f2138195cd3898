//go:build windows

package courier

import "strconv"

// ContinueWorker is how a user lets a stopped worker go on, in Windows'
// terms: a process is stopped there by suspending it (a debugger, Resource
// Monitor's "Suspend Process", a frozen virtual machine), and Resource
// Monitor resumes it. pid 0 names no process.
func ContinueWorker(pid int) string {
	if pid == 0 {
		return "Resume Process in Resource Monitor"
	}
	return "Resource Monitor, CPU tab: right-click PID " + strconv.Itoa(pid) + ", Resume Process"
}

// EndWorker is how a user ends a worker, in Windows' terms; pid 0 names no
// process.
func EndWorker(pid int) string {
	if pid == 0 {
		return "taskkill /F /PID <pid>"
	}
	return "taskkill /PID " + strconv.Itoa(pid) + " /F"
}
