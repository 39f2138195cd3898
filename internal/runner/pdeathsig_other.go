//go:build unix && !linux

package runner

import "syscall"

// dieWithServer: no parent-death signal here; the group is reaped when the
// server opens its state again (KillGroup).
func dieWithServer(*syscall.SysProcAttr) {}
