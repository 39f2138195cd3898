//go:build unix

package courier

import "strconv"

// ContinueWorker is how a user lets a stopped worker (SIGSTOP, a frozen
// container) go on, in this system's terms; pid 0 names no process.
func ContinueWorker(pid int) string {
	if pid == 0 {
		return "kill -CONT"
	}
	return "kill -CONT " + strconv.Itoa(pid)
}

// EndWorker is how a user ends a worker, in this system's terms; pid 0
// names no process.
func EndWorker(pid int) string {
	if pid == 0 {
		return "kill"
	}
	return "kill " + strconv.Itoa(pid)
}
