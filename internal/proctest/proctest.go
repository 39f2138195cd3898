// Package proctest is what tests do to other processes, the same way on
// every system: end one (SIGKILL, TerminateProcess), stop and continue it
// (SIGSTOP and SIGCONT, NtSuspendProcess and NtResumeProcess), tell whether
// it still runs, and wait until it has gone. Tests find the processes by
// the pids the store records (the worker locks' owners), not through /proc,
// so that they check the same on Linux, macOS and Windows.
package proctest

import (
	"errors"
	"time"
)

// ErrStillRunning means a process did not end within the time given.
var ErrStillRunning = errors.New("the process still runs")

// WaitGone waits until the process pid has ended, or max has passed.
func WaitGone(pid int, max time.Duration) error {
	deadline := time.Now().Add(max)
	for Alive(pid) {
		if time.Now().After(deadline) {
			return ErrStillRunning
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
