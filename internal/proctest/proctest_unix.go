//go:build unix

package proctest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Kill ends the process at once (SIGKILL): it cannot clean up, as a crash
// or an out-of-memory kill would leave it.
func Kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// Stop stops the process (SIGSTOP): alive, holding what it holds, doing
// nothing, until Continue.
func Stop(pid int) error { return syscall.Kill(pid, syscall.SIGSTOP) }

// Continue lets a stopped process go on (SIGCONT).
func Continue(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }

// Alive reports whether the process runs: it exists and, where /proc says
// so, is no zombie (dead, not yet reaped by its parent).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := strings.LastIndexByte(string(st), ')'); i >= 0 && strings.HasPrefix(string(st[i:]), ") Z") {
			return false
		}
	}
	return true
}
