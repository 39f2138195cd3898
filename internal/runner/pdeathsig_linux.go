//go:build linux

package runner

import "syscall"

// dieWithServer has Linux kill the command (SIGKILL) when the thread that
// started it ends, which is the server's end (Go ends no thread of its
// own while the process lives, unless a goroutine that locked it ends
// locked: serve has none). What the
// command started is reaped when the server opens its state again
// (KillGroup).
func dieWithServer(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
